#!/usr/bin/env bash
# Issue 16: the drain detected from monitor_live samples (the live states
# through their partial indexes) instead of a full-table count, end to end
# on the PostgreSQL server at $QC_TEST_DSN (or $1):
#   - a normal run drains: exit 0, the end event says drained, monitor
#     samples are live ones (no done), the last sample before the end is a
#     full one with done = every job, and every enqueue event (pipelined)
#     carries a distinct job id;
#   - a run that loses jobs (tests/protocols/reap_nothing.sql: killed
#     workers' claims are never reaped) ends by the drain timeout, not
#     earlier and not by a false drain: exit 1, no_lost_jobs FAIL naming the
#     jobs left in flight, not INCONCLUSIVE (the live counts show no
#     progress in the last 5 s: the timeout is 8 s, the other jobs are done
#     in about 2).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:-${QC_TEST_DSN:?QC_TEST_DSN or a DSN argument is needed}}
out=$(mktemp -d /tmp/qchaos-drain.XXXXXX)
fails=0
bad() { echo "tests/drain.sh: FAIL: $*" >&2; fails=$((fails + 1)); }

cat >"$out/lost.ini" <<INI
[scenario]
name = drain_lost_job
protocol = $PWD/tests/protocols/reap_nothing.sql
[workload]
workers = 4
jobs = 400
work_ms = 0-2
[lease]
lease_ms = 1000
reaper_interval_ms = 250
[faults]
kill_after_claim = 3
restart_delay_ms = 100
[drain]
timeout_s = 8
monitor_full_interval_ms = 1500
[checks]
judge = no_lost_jobs
INI

# The normal run lasts at least 3000 x 2 ms / 8 workers = 0.75 s of work
# (work_ms 1-3), sampled every 50 ms: the first sample is a full one, the
# ones after it live, on a fast idle machine as on a loaded one (with
# default.ini's 0 ms of work and 250 ms samples an idle machine drained
# 3,000 jobs before the second sample: no live sample at all).
cat >"$out/normal.ini" <<INI
[scenario]
name = drain_normal
protocol = $PWD/backends/postgres/skip_locked.sql
[workload]
workers = 8
jobs = 3000
work_ms = 1-3
[lease]
lease_ms = 5000
reaper_interval_ms = 500
[drain]
timeout_s = 300
monitor_interval_ms = 50
monitor_full_interval_ms = 1000
[checks]
judge = exclusive_claim, double_complete, no_lost_jobs, acked_durable
INI

./qchaos run "$out/normal.ini" --dsn "$dsn" --seed 2 \
  --out "$out/normal" --no-progress >"$out/normal.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || bad "normal run: exit $rc, expected 0 (log: $out/normal.log)"
l="$out/normal/ledger.jsonl"
jq -e -s '[.[] | select(.type == "end")][-1] | .drained == true and .timed_out != true' "$l" \
  >/dev/null || bad "normal run: the end event does not say drained"
n_live=$(jq -s '[.[] | select(.type == "monitor" and .sample == "live")] | length' "$l")
n_full=$(jq -s '[.[] | select(.type == "monitor" and .done != null)] | length' "$l")
last_done=$(jq -s '[.[] | select(.type == "monitor")] | sort_by(.seq) | .[-1].done' "$l")
n_enq=$(jq -s '[.[] | select(.type == "ok" and .op == "enqueue") | .job] | unique | length' "$l")
echo "normal run: $n_live live samples, $n_full full samples, last sample done=$last_done," \
  "$n_enq distinct enqueued job ids"
[ "$n_live" -ge 1 ] || bad "normal run: no live sample (monitor_live not used)"
[ "$n_full" -ge 1 ] || bad "normal run: no full monitor sample"
[ "$last_done" = 3000 ] || bad "normal run: the last monitor sample has done=$last_done, not 3000"
[ "$n_enq" = 3000 ] || bad "normal run: $n_enq distinct enqueued ids, not 3000"

./qchaos run "$out/lost.ini" --dsn "$dsn" --seed 4 --out "$out/lost" --no-progress \
  >"$out/lost.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || bad "lost-job run: exit $rc, expected 1 (log: $out/lost.log)"
l="$out/lost/ledger.jsonl"
r="$out/lost/results.json"
jq -e -s '[.[] | select(.type == "end")][-1] | .timed_out == true and .drained != true' "$l" \
  >/dev/null || bad "lost-job run: the end event does not say the drain timed out"
v=$(jq -r '.checkers[] | select(.name == "no_lost_jobs") | .verdict' "$r")
nv=$(jq -r '.checkers[] | select(.name == "no_lost_jobs") | .violations | length' "$r")
n_live=$(jq -s '[.[] | select(.type == "monitor" and .sample == "live")] | length' "$l")
echo "lost-job run: no_lost_jobs $v with $nv violations, $n_live live samples"
grep -E '^no_lost_jobs ' "$out/lost.log" | cut -c1-160
[ "$v" = FAIL ] || bad "lost-job run: no_lost_jobs is $v, expected FAIL"
[ "$nv" -ge 1 ] || bad "lost-job run: no violation named"
jq -e '[.checkers[] | select(.name == "no_lost_jobs") | .violations[]
  | select(.explanation | test("inflight in the final snapshot"))] | length >= 1' "$r" \
  >/dev/null || bad "lost-job run: no violation names a job left in flight"
[ "$n_live" -ge 1 ] || bad "lost-job run: no live sample (monitor_live not used)"

if [ "$fails" -eq 0 ]; then
  rm -rf "$out"
  echo "tests/drain.sh: ok"
  exit 0
fi
echo "tests/drain.sh: $fails failed (kept $out)"
exit 1
