#!/usr/bin/env bash
# The test command (`make check`): libcheck unit tests, end-to-end runs on
# real ephemeral PostgreSQL and MariaDB servers started with the project's
# own scripts, ThreadSanitizer and ASan+UBSan runs, the fuzz targets, the
# mutation matrix, the gate on the correct protocol, and the starved-client
# run.  Prints each step's duration and, last, "N passed, N failed".
#
# Most of the time of an end-to-end run is spent waiting on leases and
# drains, not on the CPU, so two groups of steps run side by side, each on
# servers of its own (two runs must never share a queue table): group A the
# test binaries, the ThreadSanitizer and ASan+UBSan runs and the gate,
# group B the fuzzers and the mutation matrix.  The starved-client run
# comes last and alone: its busy loops are meant to load the machine.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

work=$(mktemp -d /tmp/qchaos-test.XXXXXX)
chmod 755 "$work"
cleanup() {
  for d in pg pgb; do scripts/pg-ephemeral.sh destroy "$work/$d" >/dev/null 2>&1 || true; done
  for d in mdb mdbb; do scripts/mariadb-ephemeral.sh destroy "$work/$d" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
t_start=$(date +%s)

start_pg() { # folder -> prints the DSN
  local dsn
  if ! dsn=$(scripts/pg-ephemeral.sh start "$work/$1" | tail -n1) || [ -z "$dsn" ]; then
    echo "tests/run.sh: could not start PostgreSQL (see $work/$1/log)" >&2
    return 1
  fi
  printf '%s\n' "$dsn"
}
start_mdb() {
  local odbc
  if ! odbc=$(scripts/mariadb-ephemeral.sh start "$work/$1" | tail -n1) || [ -z "$odbc" ]; then
    echo "tests/run.sh: could not start MariaDB (see $work/$1/log)" >&2
    return 1
  fi
  printf '%s\n' "$odbc"
}

echo "== starting ephemeral servers: two PostgreSQL, two MariaDB (one of each per group)"
dsn_a=$(start_pg pg) && dsn_b=$(start_pg pgb) && odbc_a=$(start_mdb mdb) &&
  odbc_b=$(start_mdb mdbb) || exit 3
echo "   A: $dsn_a"
echo "   B: $dsn_b"
echo "   (MariaDB: ${odbc_a//Pwd=*;/Pwd=***;})"

# step NAME COMMAND...: runs it, prints its duration, records PASS/FAIL in
# the group's results file ($results).
step() {
  local name=$1 t0 rc
  shift
  echo "== $name"
  t0=$(date +%s)
  "$@"
  rc=$?
  printf '%s\t%s\t%s\n' "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "$(($(date +%s) - t0))" \
    "$name" >>"$results"
  echo "-- $name: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $(($(date +%s) - t0)) s"
}

group_a() {
  export QC_TEST_DSN="$dsn_a" QC_TEST_ODBC="$odbc_a"
  for t in tests/check_*; do
    case "$t" in *.c) continue ;; esac
    [ -x "$t" ] || continue
    step "$(basename "$t")" "./$t"
  done
  step "command line (help, bad options, bad DSN, --force, repeat command, output order)" \
    tests/cli.sh
  step "network faults through the built-in proxy (tests/proxy.sh)" tests/proxy.sh "$dsn_a"
  step "make install PREFIX=tmp, run default from another folder" tests/install.sh
  # the ephemeral scripts themselves: hermetic against PG* / MYSQL*, a child
  # judged by /proc state before it has exec'd, MariaDB under a CPU hog
  step "ephemeral scripts (tests/ephemeral.sh)" tests/ephemeral.sh
  step "failover on a replicated PostgreSQL, async and sync (tests/failover.sh)" \
    tests/failover.sh "$work/failover"
  step "scripted interleavings, --replay, explore (tests/sched.sh)" tests/sched.sh
  # LISTEN/NOTIFY wake-ups (issue 17): the correct protocol under listen
  # kills, the hot-loop and wrong-channel mutants, MariaDB refused
  step "LISTEN/NOTIFY wake-ups under listen kills, two mutants (tests/listen.sh)" tests/listen.sh
  tsan_run() {
    make -s qchaos-tsan || return 1
    TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
      ./qchaos-tsan run scenarios/default.ini --dsn "$dsn_a" --jobs 2000 --workers 8 --seed 3 \
      --out "$work/tsan" --no-progress
  }
  step "e2e under ThreadSanitizer (default scenario, 2000 jobs, 8 workers)" tsan_run
  tsan_chaos() {
    # QC_AUDIT_THREADS=3: the audit's checkers on threads although the
    # ledger is below the size where they would be (checkers.h)
    QC_AUDIT_THREADS=3 TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
      ./qchaos-tsan run scenarios/chaos.ini --dsn "$dsn_a" --jobs 1500 --seed 3 \
      --out "$work/tsan-chaos" --no-progress
  }
  step "e2e under ThreadSanitizer (chaos scenario: every fault, nemesis)" tsan_chaos
  # The end-to-end scenarios once more on the ASan+UBSan build, halting on
  # the first finding (check_scenarios runs $QC_QCHAOS_BIN): every fault
  # scenario on the correct protocol once, PostgreSQL and MariaDB.
  asan_scenarios() {
    make -s qchaos-asan || return 1
    QC_QCHAOS_BIN=./qchaos-asan QC_SCENARIOS_SUBSET=correct \
      ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./tests/check_scenarios
  }
  step "e2e fault scenarios under ASan+UBSan (check_scenarios subset on ./qchaos-asan)" \
    asan_scenarios
  # The CI gate of the README on the correct protocol: every scenario of
  # the battery passes.
  step "qchaos gate on the correct protocol" \
    ./qchaos gate backends/postgres/skip_locked.sql --dsn "$dsn_a" --out "$work/gate"
  # qchaos shrink: its input errors, SIGINT, and a failing 16-worker chaos
  # run of a mutant cut to at most 3 workers and 10 jobs that still fails
  step "qchaos shrink (tests/shrink.sh)" tests/shrink.sh
  # issue 17: C20 wedged workers (worker_progress) and C24 clock skew
  step "wedged workers and clock skew (tests/wedged.sh)" tests/wedged.sh "$dsn_a"
  # issue 16: the drain from monitor_live samples, a lost job still caught
  step "drain from live counts, a lost job still FAILs (tests/drain.sh)" tests/drain.sh "$dsn_a"
  # (in group A since the mutation matrix made group B the longer: 1,226
  # s against 1,003 in CI of e6e6d1f)
  # Queue libraries through adapters (docs/adapters.md): the broken
  # adapters (exit 5, the line named, the ledger kept), then pg-boss,
  # graphile-worker and Minion under their process faults, one seed each.
  step "adapters: protocol errors, pg-boss, graphile-worker, Minion (tests/adapters.sh)" \
    tests/adapters.sh "$dsn_a"
  # Sharded runs (issue 16): 4 processes merge into one process's verdicts
  # per scenario, a mutant's violation found across two ledgers (~45 s)
  step "sharded runs: --shard I/4 merged by qchaos audit (tests/shard.sh)" tests/shard.sh
  # The MariaDB mutants (backends/mariadb/mutants, each through the gate
  # battery on group A's MariaDB, its base protocol as the correct one on
  # their scenarios): here rather than in group B's matrix since there
  # were eleven of them (decision 1126: about 250 s at K = 2, one run at
  # a time), which made group B the longer by that much.
  step "MariaDB mutants through the gate battery (2 seeds)" ./qchaos mutation --seeds 2 \
    --only mariadb: --dsn "$dsn_a" --odbc "$odbc_a" --out "$work/mutation-mariadb"
}

group_b() {
  export QC_TEST_DSN="$dsn_b" QC_TEST_ODBC="$odbc_b"
  # Fuzzing: the three loaders' libFuzzer targets, FUZZ_SECONDS each, after
  # the regression inputs and seeds under ASan+UBSan.
  fuzz_run() {
    make -s fuzz || return 1
    ./build/fuzz/check_fuzz-san || return 1
    make -s fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-25}"
  }
  step "fuzz targets (scenario, protocol, ledger; ${FUZZ_SECONDS:-25} s each)" fuzz_run
  # Detection power: every mutant must be caught in every seed and the
  # correct protocol must raise nothing (K = 2 here; `make mutation K=10`);
  # PostgreSQL and policy mutants (the MariaDB ones: group A's last step).
  step "mutation matrix through the gate battery (2 seeds)" ./qchaos mutation --seeds 2 \
    --jobs 2 --dsn "$dsn_b" --out "$work/mutation"
  # issue 16: 250 workers through PgBouncer (8 server sessions) with
  # faults, the correct protocol PASSes; limits refused (~30 s)
  step "250 workers through PgBouncer in transaction mode (tests/pooler_many.sh)" \
    tests/pooler_many.sh
}

echo "== groups A (test binaries, TSan, ASan+UBSan, gate) and B (fuzz, mutation) side by side"
results=$work/results-a group_a >"$work/group-a.log" 2>&1 &
pid_a=$!
results=$work/results-b group_b >"$work/group-b.log" 2>&1 &
pid_b=$!
wait "$pid_a"
wait "$pid_b"

# The starved client (issue 11): the correct protocols over the fault
# scenarios on the ASan+UBSan build beside one busy loop per core; not one
# violation may be reported.
echo "== starved client (alone, after both groups)"
results=$work/results-c
step "starved client: correct protocols over the fault scenarios beside busy loops (tests/starved.sh)" \
  env QC_QCHAOS_BIN=./qchaos-asan tests/starved.sh "$dsn_a" "$work/starved" >"$work/group-c.log" 2>&1

# The logs, once every step is known to have passed or not: the run
# folders they name live in $work, which is removed when all passed, so
# then the logs say $TESTDIR instead of a path that no longer exists.
failed=$(cat "$work"/results-* | grep -c '^FAIL')
for g in a b c; do
  echo
  echo "==================== $([ $g = c ] && echo "starved client" || echo "group ${g^^}") ===================="
  if [ "$failed" -eq 0 ]; then sed "s#$work#\$TESTDIR#g" "$work/group-$g.log"; else cat "$work/group-$g.log"; fi
done

echo
echo "== durations (s)"
cat "$work"/results-* | sort -t$'\t' -k2,2nr | awk -F'\t' '{printf "   %5d  %s  %s\n", $2, $1, $3}'
checks=$(grep -h -E '^[0-9]+%: Checks: [0-9]+' "$work"/group-*.log | sed -E 's/.*Checks: ([0-9]+).*/\1/' |
  awk '{s += $1} END {print s + 0}')
passed=$(cat "$work"/results-* | grep -c '^PASS')
failed=$(cat "$work"/results-* | grep -c '^FAIL')
grep -h '^FAIL' "$work"/results-* | cut -f3 | sed 's/^/FAILED: /'
echo "libcheck checks run: $checks; the whole test command took $(($(date +%s) - t_start)) s"
if [ "$failed" -eq 0 ]; then
  cleanup
  rm -rf "$work" # run folders and ledgers are big; kept only when something failed
  echo "tests/run.sh: every step passed: $work (the run folders and logs above) is removed"
else
  echo "tests/run.sh: run folders and logs kept in $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
