#!/usr/bin/env bash
# End-to-end: the network faults of qchaos's built-in proxy (issue 17) on
# the correct protocol, against the real PostgreSQL of QC_TEST_DSN (or $1):
# each scenario must pass with opportunities (exit 0), and its ledger must
# hold the faults with what proves them (the lost ack's dropped answer and
# the info outcome before it, the half-open connection reset by the
# emulated tcp_user_timeout, the partition's window and targets).  The
# mutants these scenarios expose run in the mutation matrix.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:-${QC_TEST_DSN:-}}
[ -n "$dsn" ] || { echo "tests/proxy.sh: give a DSN (or QC_TEST_DSN)" >&2; exit 2; }
work=$(mktemp -d /tmp/qchaos-proxy.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "tests/proxy.sh: $*" >&2; fail=1; }

run() { # scenario [extra args] -> runs it into $work/<name>, expects exit 0
  local sc=$1 name
  name=$(basename "$sc" .ini)
  shift
  local t0
  t0=$(date +%s)
  ./qchaos run "$sc" --dsn "$dsn" --seed 7 --out "$work/$name" --no-progress "$@" \
    >"$work/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    bad "$sc exited $rc (expected 0):"
    tail -n 15 "$work/$name.log" >&2
  fi
  echo "$sc $*: exit $rc in $(($(date +%s) - t0)) s, $(grep -o 'proxy: [0-9]* connections.*' "$work/$name.log" | head -1)"
}
count() { # pattern file -> number of lines
  grep -c -- "$1" "$2" || true
}

run scenarios/network_lost_ack.ini --jobs 300
l=$work/network_lost_ack/ledger.jsonl
n=$(count '"fault":"lost_ack","job":[0-9]*,"token":"[^"]*","via":"proxy","answer":"UPDATE 1"' "$l")
[ "$n" -ge 1 ] || bad "network_lost_ack: no lost_ack fault with the dropped answer 'UPDATE 1'"
# each such fault follows the info outcome of that complete
python3 - "$l" <<'PY' || bad "network_lost_ack: a proxy lost_ack without the info complete before it"
import json, sys
ev = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
last = {}
bad = 0
for e in ev:
    if e.get("type") == "info" and e.get("op") == "complete":
        last[e["worker"]] = e
    if e.get("type") == "fault" and e.get("via") == "proxy":
        i = last.get(e["worker"])
        if not i or i.get("job") != e.get("job") or i.get("token") != e.get("token"):
            bad += 1
sys.exit(1 if bad else 0)
PY
run scenarios/network_lost_ack.ini --jobs 200 --protocol backends/postgres/skip_locked_txn.sql \
  --out "$work/network_lost_ack_txn"
n=$(count '"via":"proxy","answer":"COMMIT"' "$work/network_lost_ack_txn/ledger.jsonl")
[ "$n" -ge 1 ] || bad "network_lost_ack on skip_locked_txn: no lost_ack with the answer 'COMMIT'"

run scenarios/network_half_open.ini
l=$work/network_half_open/ledger.jsonl
[ "$(count '"type":"fault","worker":[0-9]*,"inc":[0-9]*,"fault":"half_open"' "$l")" -eq 6 ] || bad "network_half_open: not 6 half_open faults"
n=$(count 'half_open: connection reset after 1000 ms without an answer (tcp_user_timeout)' "$l")
[ "$n" -ge 1 ] || bad "network_half_open: no connection reset by the emulated tcp_user_timeout"

run scenarios/network_reset.ini --jobs 300
[ "$(count '"fault":"reset"' "$work/network_reset/ledger.jsonl")" -ge 1 ] ||
  bad "network_reset: no reset fault"

run scenarios/network_partition.ini
l=$work/network_partition/ledger.jsonl
n=$(count '"fault":"partition","worker":-2,"target":[012],"mode":"silent","until_t":' "$l")
[ "$n" -eq 3 ] || bad "network_partition: expected a partition fault for w0, w1 and w2, got $n"

run scenarios/network_latency.ini --jobs 200
[ "$(count '"fault":"latency","worker":-2,"target":' "$work/network_latency/ledger.jsonl")" -eq 8 ] ||
  bad "network_latency: expected a latency fault per worker"

# the proxy refuses what it cannot do, with exit 2 and the reason
./qchaos run scenarios/network_reset.ini --protocol backends/mariadb/skip_locked.sql \
  --dsn "$dsn" --out "$work/engine" --no-progress >"$work/engine.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "speaks PostgreSQL's protocol only" "$work/engine.log" ||
  bad "a MariaDB protocol behind the proxy: exit $rc, expected 2 naming the reason"
exit $fail
