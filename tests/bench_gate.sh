#!/usr/bin/env bash
# tests/bench_gate.sh [--seeds K] [--jobs N] [pg|mariadb|all]: the gate's
# detection power and wall time (issue 12).  A benchmark that prints
# numbers, not a test: `make check` does not run it (it takes about an hour
# with 10 seeds on 2 cores).
#
#   pg       `qchaos mutation --seeds K`: every PostgreSQL mutant and policy
#            mutant through the gate battery of its model (its own scenario
#            first, up to the first run that fails an expected checker),
#            then the correct protocols skip_locked, skip_locked_txn and
#            group_fifo (--groups) through the whole battery, K seeds, N
#            runs at a time (a database per slot on one ephemeral server)
#   mariadb  `qchaos gate` on backends/mariadb/skip_locked.sql (K seeds, N
#            at a time, each run on an ephemeral MariaDB of its own), and
#            `qchaos gate --fail-fast` on the MariaDB mutant, once per seed
#   plain    `qchaos gate --fail-fast PROTOCOL` as a user runs it (no
#            mutant header used), seed 1, on every PostgreSQL mutant
#
# Prints, per protocol: seeds passed (correct) or caught (mutant) out of K,
# and the wall time; the machine's load average before and after.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seeds=10 jobs=3 what=all
while [ $# -gt 0 ]; do
  case "$1" in
  --seeds) seeds=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  pg | mariadb | plain | all) what=$1; shift ;;
  *) echo "usage: tests/bench_gate.sh [--seeds K] [--jobs N] [pg|mariadb|plain|all]" >&2; exit 2 ;;
  esac
done
bin=${QC_QCHAOS_BIN:-./qchaos}
work=$(mktemp -d /tmp/qchaos-bench-gate.XXXXXX)
chmod 755 "$work"
cleanup() { scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1 || true; }
trap cleanup EXIT
echo "bench_gate: $seeds seeds, $jobs runs at a time, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), results in $work"

secs() { echo $(($(date +%s) - $1)); }

if [ "$what" = pg ] || [ "$what" = all ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  t0=$(date +%s)
  "$bin" mutation --seeds "$seeds" --jobs "$jobs" --dsn "$dsn" --out "$work/mutation" \
    >"$work/mutation.log" 2>&1
  rc=$?
  echo "== PostgreSQL: mutants through the gate battery, then the correct protocols (exit $rc, $(secs "$t0") s)"
  grep -E '^(mutant|policy:|[a-z_]+ +[a-z_, ]+ +[0-9]+/[0-9]+)' "$work/mutation.log" | sed 's/^/   /'
  grep -E 'correct protocol .* through the gate' "$work/mutation.log" | sed 's/^qchaos: mutation: /   /'
  for g in "$work"/mutation/correct-*/gate.json; do
    [ -f "$g" ] || continue
    name=$(basename "$(dirname "$g")")
    # a seed passes when every scenario of it exited 0
    passed=$(tr -d ' \n' <"$g" | grep -o '"seed":[0-9]*,"run":true,"exit":[0-9]*' |
      awk -F'[:,]' '{s[$2] = s[$2] || ($6 != 0)} END {n = 0; for (k in s) if (!s[k]) n++; print n}')
    echo "   $name: $passed of $seeds seeds passed every scenario"
  done
  grep -E 'false positives|: +[0-9]+/[0-9]+' "$work/mutation.log" | grep -v ' 0/' | sed 's/^/   /'
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
fi

if [ "$what" = mariadb ] || [ "$what" = all ]; then
  t0=$(date +%s)
  "$bin" gate backends/mariadb/skip_locked.sql --seeds "$seeds" --jobs "$jobs" \
    --out "$work/mariadb-correct" >"$work/mariadb-correct.log" 2>&1
  rc=$?
  echo "== MariaDB: backends/mariadb/skip_locked.sql, $seeds seeds, $jobs at a time: exit $rc, $(secs "$t0") s"
  grep -E 'seeds passed|verdict' "$work/mariadb-correct.log" | sed 's/^/   /'
  caught=0 t0=$(date +%s)
  for s in $(seq 1 "$seeds"); do
    "$bin" gate backends/mariadb/mutants/select_then_update.sql --seed "$s" --fail-fast \
      --out "$work/mariadb-mutant/seed$s" >"$work/mariadb-mutant-$s.log" 2>&1
    rc=$?
    grep -q 'exclusive_claim' "$work/mariadb-mutant/seed$s/gate.json" 2>/dev/null && [ $rc -eq 1 ] &&
      caught=$((caught + 1))
  done
  echo "== MariaDB mutant select_then_update: exclusive_claim failed the gate in $caught of $seeds seeds ($(secs "$t0") s)"
fi

if [ "$what" = plain ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  echo "== qchaos gate --fail-fast on every PostgreSQL mutant, seed 1"
  for m in backends/postgres/mutants/*.sql; do
    flags=""
    grep -q '^-- expect:.*group_' "$m" && flags="--groups"
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" gate "$m" $flags --fail-fast --dsn "$dsn" --out "$work/plain/$(basename "$m" .sql)" \
      >"$work/plain-$(basename "$m" .sql).log" 2>&1
    rc=$?
    printf '   %-32s exit %d in %3d s  %s\n' "$(basename "$m" .sql)" "$rc" "$(secs "$t0")" \
      "$(grep -o 'verdict: [A-Z]*' "$work/plain-$(basename "$m" .sql).log")"
  done
fi
echo "bench_gate: load $(cut -d' ' -f1-3 /proc/loadavg)"
