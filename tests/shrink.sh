#!/usr/bin/env bash
# qchaos shrink (issue 12) on real runs (needs ./qchaos, or QC_QCHAOS_BIN,
# and QC_TEST_DSN): its input errors (not a run folder, a run that
# passed, a --checker that did not fail, the run's protocol file gone, a
# bad option: exit 2 with the message), SIGINT (exit 4 within seconds, the
# running child stopped), and a real failing run cut down: a 16-worker,
# 2,000-job chaos run of the select_then_update mutant becomes a scenario
# of at most 3 workers and 10 jobs in which exclusive_claim still FAILs.
# Prints one line per check; exit 0 when all pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${QC_TEST_DSN:?tests/shrink.sh needs QC_TEST_DSN (a libpq conninfo)}"
dsn=$QC_TEST_DSN
bin=${QC_QCHAOS_BIN:-./qchaos}
tmp=$(mktemp -d /tmp/qchaos-shrink.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "   ok: $*"; }
bad() { echo "   FAILED: $*"; failed=1; }
run() { # exit-code description command...  (output in $tmp/out)
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$what (exit $got)"; else
    bad "$what: exit $got, want $want"
    sed 's/^/      /' "$tmp/out" | tail -n 5
  fi
}
has() { # description grep-pattern: $tmp/out must match
  if grep -q -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: no '$2' in: $(head -c 400 "$tmp/out")"; fi
}

# --- input errors ---------------------------------------------------------
run 2 "a folder that does not exist" "$bin" shrink "$tmp/nowhere"
has "it is named as not a run folder" "'$tmp/nowhere' is not a run folder"
mkdir "$tmp/empty"
run 2 "a folder without results.json" "$bin" shrink "$tmp/empty"
has "it says what a run folder holds" "results.json"
run 2 "a bad option" "$bin" shrink --bogus "$tmp/empty"
has "the option is named" "unknown option '--bogus'"
run 2 "no run folder" "$bin" shrink
run 2 "--max-runs 0" "$bin" shrink --max-runs 0 "$tmp/empty"

# a run that passed: nothing to shrink
"$bin" run scenarios/gate/contention.ini --jobs 100 --workers 2 --dsn "$dsn" --seed 1 \
  --out "$tmp/pass" --no-progress >"$tmp/pass.log" 2>&1
run 2 "a run that passed" "$bin" shrink "$tmp/pass"
has "it says the run failed no checker" "failed no checker (verdict PASS)"

# --- a real failing run -------------------------------------------------------
"$bin" run scenarios/chaos.ini --protocol backends/postgres/mutants/select_then_update.sql \
  --workers 16 --jobs 2000 --dsn "$dsn" --seed 5 --out "$tmp/fail" --no-progress \
  >"$tmp/fail.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'exclusive_claim' "$tmp/fail/results.json"; then
  ok "the chaos run of select_then_update fails (exit 1)"
else
  bad "the chaos run of select_then_update: exit $rc, want 1"
fi
run 2 "--checker that did not fail" "$bin" shrink --checker group_order "$tmp/fail"
has "it lists the checkers that failed" "did not fail in .*exclusive_claim"

# the protocol file gone: a copy of the run whose ledger names a protocol
# that is not there
mkdir "$tmp/gone"
cp "$tmp/fail/results.json" "$tmp/gone/"
sed '1s#"protocol":"[^"]*"#"protocol":"/nonexistent/q.sql"#' "$tmp/fail/ledger.jsonl" >"$tmp/gone/ledger.jsonl"
run 2 "the run's protocol file gone" "$bin" shrink "$tmp/gone"
has "the protocol file is named" "protocol file '/nonexistent/q.sql'"

# SIGINT stops it: exit 4 within seconds, no child left
"$bin" shrink "$tmp/fail" --dsn "$dsn" --out "$tmp/int" >"$tmp/int.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do # until the first try has started
  [ -d "$tmp/int/try-01" ] && break
  sleep 0.1
done
sleep 0.5
kill -INT "$pid"
t0=$(date +%s)
wait "$pid"
rc=$?
if [ $rc -eq 4 ] && [ $(($(date +%s) - t0)) -le 30 ]; then
  ok "SIGINT: exit 4 in $(($(date +%s) - t0)) s"
else
  bad "SIGINT: exit $rc after $(($(date +%s) - t0)) s, want 4 within 30 s"
fi
if grep -q 'interrupted' "$tmp/int.log"; then ok "SIGINT: it says it was interrupted"; else
  bad "SIGINT: no 'interrupted' in $(tail -c 300 "$tmp/int.log")"
fi

# the shrink itself
t0=$(date +%s)
"$bin" shrink "$tmp/fail" --dsn "$dsn" --max-runs 20 --timeout 120 --confirm 1 \
  --out "$tmp/shrunk" >"$tmp/out" 2>&1
rc=$?
echo "   (shrink: exit $rc in $(($(date +%s) - t0)) s: $(grep -E -- '-> ' "$tmp/out" | sed 's/qchaos: shrink: //')"
ini=$tmp/shrunk/shrunk.ini
if [ $rc -eq 0 ] && [ -f "$ini" ]; then ok "shrink wrote $ini (exit 0)"; else
  bad "shrink: exit $rc, no $ini"
  tail -n 8 "$tmp/out" | sed 's/^/      /'
fi
w=$(awk -F' *= *' '$1 == "workers" {v = $2} END {print v + 0}' "$ini" 2>/dev/null)
j=$(awk -F' *= *' '$1 == "jobs" {v = $2} END {print v + 0}' "$ini" 2>/dev/null)
if [ "${w:-0}" -ge 1 ] && [ "$w" -le 3 ] && [ "${j:-0}" -ge 1 ] && [ "$j" -le 10 ]; then
  ok "the shrunk scenario has $w workers and $j jobs (at most 3 and 10)"
else
  bad "the shrunk scenario has ${w:-?} workers and ${j:-?} jobs, want at most 3 and 10"
fi
if grep -q '^; Checker that fails: exclusive_claim' "$ini" 2>/dev/null &&
  grep -q "^; Shrunk by qchaos shrink from the run in $tmp/fail" "$ini"; then
  ok "its comment names the run it came from and the checker"
else
  bad "its comment does not name the run and the checker: $(head -n 5 "$ini" 2>/dev/null)"
fi
has "the command that runs it is printed (the binary as invoked)" "run it: $bin run $ini --dsn '...'"
# and it still fails, run as the user would run it.  Its seed fixes the
# workload, not the interleaving: a 2-worker, 1-job race failed in 8 of 10
# runs on an idle machine and in neither of two runs in CI at load 5, so up
# to five runs (each 0.5-3 s) and one that fails is enough.
for k in 1 2 3 4 5; do
  "$bin" run "$ini" --dsn "$dsn" --out "$tmp/again$k" --no-progress --force >"$tmp/again.log" 2>&1
  rc=$?
  grep -q 'verdict: FAIL: .*exclusive_claim' "$tmp/again.log" && break
done
if [ $rc -eq 1 ] && grep -q 'verdict: FAIL: .*exclusive_claim' "$tmp/again.log"; then
  ok "qchaos run of the shrunk scenario fails exclusive_claim (exit 1, run $k of at most 5)"
else
  bad "qchaos run of the shrunk scenario: exit $rc in 5 runs; $(grep verdict "$tmp/again.log")"
fi
# what does not depend on the interleaving: the kept cut's failing run,
# replayed (decision 62), fails exclusive_claim again
rdir=$(sed -n 's/^qchaos: shrink: replay its failing run: [^ ]* run --replay \([^ ]*\).*/\1/p' "$tmp/out")
if [ -n "$rdir" ] && [ -f "$rdir/ledger.jsonl" ] && grep -q "^; $bin run --replay $rdir" "$ini"; then
  ok "the replay of its failing run is printed and in shrunk.ini"
else
  bad "no replay command for a failing run in the output / shrunk.ini (got '$rdir')"
fi
"$bin" run --replay "$rdir" --dsn "$dsn" --out "$tmp/replayed" --no-progress >"$tmp/replayed.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'replay: exclusive_claim failed again' "$tmp/replayed.log"; then
  ok "the replay of the shrunk scenario's failing run fails exclusive_claim again (exit 1)"
else
  bad "the replay of $rdir: exit $rc; $(grep -E 'replay|verdict' "$tmp/replayed.log" | tail -3)"
fi
# issue 17: the listen nemesis keys and the proxy's keys are cut too.  A
# LISTEN protocol behind the proxy with latency, jitter, a bandwidth limit,
# a partition, listen kills and clock skews (decision 955); the failure (a 0-row complete counted
# after a lost ack) needs none of them, so each cut is kept and shrunk.ini
# has them off.  One try per cut (--tries 1): the lost ack fails every run.
cat >"$tmp/net.ini" <<EOF
[scenario]
name = shrink_net_listen
protocol = $PWD/backends/postgres/skip_locked_listen.sql
[workload]
workers = 1
jobs = 4
work_ms = 0-2
[network]
proxy = on
latency_ms = 1
jitter_ms = 2
bandwidth = 1000000
partition = w0
partition_at_ms = 2000
partition_ms = 300
[policy]
count_zero_row_complete = yes
[faults]
lost_ack = 1
clock_skew_ms = 400,-700
reaper_skew_ms = -300
[nemesis]
listen_close_every_ms = 300
listen_terminate_every_ms = 400
[checks]
judge = no_false_success
EOF
"$bin" run "$tmp/net.ini" --dsn "$dsn" --seed 3 --out "$tmp/netfail" --no-progress >"$tmp/netfail.log" 2>&1
rc=$?
if [ $rc -eq 1 ]; then ok "the network + listen run fails no_false_success (exit 1)"; else
  bad "the network + listen run: exit $rc, want 1: $(grep -E 'verdict|qchaos: [a-z]' "$tmp/netfail.log" | tail -n 3)"
fi
run 0 "shrink cuts the listen and network keys" "$bin" shrink "$tmp/netfail" --dsn "$dsn" \
  --tries 1 --confirm 1 --max-runs 30 --out "$tmp/netshrunk"
cp "$tmp/out" "$tmp/netshrink.log"
echo "   (network shrink: $(grep -c "^qchaos: shrink: try" "$tmp/netshrink.log") child runs)"
nini=$tmp/netshrunk/shrunk.ini
for kv in 'listen_close_every_ms = 0' 'listen_terminate_every_ms = 0' 'latency_ms = 0' \
  'jitter_ms = 0' 'bandwidth = 0' 'clock_skew_ms = 0,0' 'reaper_skew_ms = 0'; do
  if sed -n '/--- the cut/,$p' "$nini" 2>/dev/null | grep -qx "$kv"; then ok "shrunk.ini: $kv"; else
    bad "shrunk.ini lacks '$kv' in its cut: $(sed -n '/--- the cut/,$p' "$nini" 2>/dev/null | tr '\n' ' ')"
  fi
done
if [ -f "$nini" ] && ! grep -q '^partition *=' "$nini"; then ok "shrunk.ini: the partition is cut"; else
  bad "shrunk.ini still has a partition: $(grep '^partition' "$nini" 2>/dev/null)"
fi
has "each network cut was tried" "try .*(partition off)"
exit $failed
