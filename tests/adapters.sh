#!/usr/bin/env bash
# tests/adapters.sh [DSN] - the adapter protocol's error handling and the
# three library adapters (docs/adapters.md), on a real PostgreSQL (DSN, else
# $QC_TEST_DSN, else an ephemeral one of its own).
#
#   errors     tests/adapters/broken.js breaks the protocol in each way
#              docs/adapters.md lists: exit 5, a message naming the command,
#              the process and the line, and the ledger so far kept;
#   libraries  scenarios/adapters/{pgboss,graphile_worker,minion}.ini, one
#              seed each: the run completes (exit 0, 1 or 4, never 2, 3, 5),
#              every planned fault fired as a process fault, the verdicts
#              each library's code implies (README "Testing a queue
#              library") hold; with the witness on (the scenarios say so):
#              its trigger on the library's own table recorded row changes,
#              the accounts agree, every lost ack's info outcome is
#              resolved, and report.md has the "Library behaviour" section
#              citing witness rows (docs/adapters.md, "What the libraries
#              do").
#
#   tests/adapters.sh [DSN] [errors|libraries]   (both by default)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:-${QC_TEST_DSN:-}}
what=${2:-all}
work=$(mktemp -d /tmp/qchaos-adapters.XXXXXX)
chmod 755 "$work"
own=0
# QC_ADAPTERS_KEEP=1 keeps the run folders (their path is printed)
cleanup() {
  ((own)) && scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
  if [ -n "${QC_ADAPTERS_KEEP:-}" ]; then echo "tests/adapters.sh: runs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
if [ -z "$dsn" ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  own=1
fi
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# broken MODE EXPECTED-TEXT [ledger]: the run exits 5 and says EXPECTED-TEXT;
# with "ledger", the ledger holds the enqueue events written before.
broken() {
  local mode=$1 want=$2 ledger=${3:-} out=$work/broken-$1 sc=$work/broken-$1.ini rc start=20000
  # node may take seconds to start on a loaded machine: only the silent
  # adapter is given a short start bound (its enqueuer must still make it)
  [ "$mode" = silent ] && start=8000
  cat >"$sc" <<INI
[scenario]
name = broken_$mode
protocol = $PWD/tests/adapters/broken.sql
[adapter]
command = node tests/adapters/broken.js $mode
start_timeout_ms = $start
answer_timeout_ms = 1500
[workload]
workers = 2
jobs = 3
[drain]
timeout_s = 15
INI
  ./qchaos run "$sc" --dsn "$dsn" --out "$out" --no-progress >"$out.log" 2>&1
  rc=$?
  if [ "$rc" -ne 5 ]; then
    fail "broken adapter '$mode': exit $rc, expected 5 ($(tail -n1 "$out.log"))"
    return
  fi
  if ! grep -qF -- "$want" "$out.log" || ! grep -qF "adapter 'node tests/adapters/broken.js $mode'" "$out.log"; then
    fail "broken adapter '$mode': the message does not say '$want' and name the command: $(grep adapter "$out.log" | tail -n1)"
    return
  fi
  if [ -n "$ledger" ] && [ "$(grep -c '"op":"enqueue"' "$out/ledger.jsonl" 2>/dev/null)" != 3 ]; then
    fail "broken adapter '$mode': the ledger so far was not kept (no 3 enqueue events in $out/ledger.jsonl)"
    return
  fi
  pass "broken adapter '$mode': exit 5, '$want'"
}

# a lost ack is taken at the claim and fires at the complete: when the
# library fails the job instead (pg-boss fails a handler that outlives
# expireInSeconds), the fault goes back to the plan and fires at the next
# claim's complete, with a note saying why (harness/adapter.c,
# defer_lost_ack); broken.js failfirst fails every first attempt
deferred() {
  local out=$work/deferred sc=$work/deferred.ini rc fired note
  cat >"$sc" <<INI
[scenario]
name = deferred_lost_ack
protocol = $PWD/tests/adapters/broken.sql
[adapter]
command = node tests/adapters/broken.js failfirst 3
start_timeout_ms = 20000
[workload]
workers = 1
jobs = 3
[faults]
lost_ack = 1
[drain]
timeout_s = 15
; broken.sql's snapshot is empty, so the run counts as drained at its
; first monitor sample; faults stay on through the idle tail, which gives
; the adapter's 6 steps 5 s (CI at load 10: the second claim came after a
; 0 s tail)
idle_tail_s = 5
INI
  ./qchaos run "$sc" --dsn "$dsn" --out "$out" --seed 1 --no-progress >"$out.log" 2>&1
  rc=$?
  fired=$(grep '"type":"fault".*"fault":"lost_ack"' "$out/ledger.jsonl" 2>/dev/null | grep -c '"token":"[0-9]*\.2"')
  note=$(grep -c '"note":"fault deferred to the next claim","fault":"lost_ack".*"why":"the library failed the job' "$out/ledger.jsonl" 2>/dev/null)
  if [ "$rc" -gt 4 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || [ "$fired" != 1 ] || [ "$note" != 1 ]; then
    fail "deferred lost ack: exit $rc, $fired lost acks fired on a second attempt (1 expected), $note deferral notes (1 expected)"
    return
  fi
  pass "deferred lost ack: the first attempt failed, the lost ack fired at the second's complete (exit $rc)"
}

if [ "$what" = all ] || [ "$what" = errors ]; then
  broken exit "exited (exit status 3) before its hello" ledger
  broken silent "no hello within 8000 ms ([adapter] start_timeout_ms)" ledger
  broken malformed "line 2 of its stdout: expected one JSON object per line" ledger
  broken unknown "line 2 of its stdout: unknown message type 'took'" ledger
  broken nojob "line 2 of its stdout: 'claimed' needs an integer \"job\"" ledger
  broken enq-noanswer "(enqueuer.0): no answer to enqueue within 1500 ms"
  broken enq-malformed "(enqueuer.0): line 2 of its stdout: expected one JSON object per line ('[' or '{' expected near 'enqueued'): enqueued, all of them"
  deferred
fi

# verdict RESULTS CHECKER -> its verdict in results.json
verdict() {
  node -e 'const r = require(process.argv[1]); const c = (r.checkers || []).find((x) => x.name === process.argv[2]); console.log(c ? c.verdict : "absent")' "$1" "$2"
}

# library NAME SEED CHECKER=VERDICT...: runs scenarios/adapters/NAME.ini
library() {
  local name=$1 seed=$2 njobs_min=$3 out=$work/lib-$1 rc k v got planned fired
  shift 3
  ./qchaos run "scenarios/adapters/$name.ini" --dsn "$dsn" --seed "$seed" --out "$out" \
    --no-progress >"$out.log" 2>&1
  rc=$?
  case $rc in
  0 | 1 | 4) ;;
  *) fail "adapter $name: exit $rc ($(grep -v '^pg-' "$out.log" | tail -n2 | tr '\n' ' '))"; return ;;
  esac
  for f in kill_after_claim stall_beyond_lease lost_ack; do
    planned=$(grep -o "\"fault\":\"$f\",\"planned\":[0-9]*" "$out/ledger.jsonl" | grep -o '[0-9]*$')
    fired=$(grep -c "\"type\":\"fault\".*\"fault\":\"$f\"" "$out/ledger.jsonl")
    if [ "${planned:-0}" -lt 1 ] || [ "$fired" != "$planned" ]; then
      fail "adapter $name: $f planned ${planned:-0}, fired $fired"
      return
    fi
  done
  # the witness: on the library's table, read whole, every info resolved
  local wrows wcomplete wunres winfo
  wrows=$(node -e 'const w = require(process.argv[1]).witness || {}; console.log(w.rows || 0, w.complete === true, w.unresolved, w.info_outcomes)' "$out/results.json")
  read -r wrows wcomplete wunres winfo <<<"$wrows"
  if [ "$wrows" -lt "$njobs_min" ] || [ "$wcomplete" != true ] || [ "$wunres" != 0 ] || [ "${winfo:-0}" -lt 1 ]; then
    fail "adapter $name: witness rows $wrows (at least $njobs_min expected), read whole $wcomplete, info outcomes ${winfo:-none}, unresolved $wunres (0 expected)"
    return
  fi
  if ! grep -q '^## Library behaviour' "$out/report.md" ||
    [ "$(sed -n '/^## Library behaviour/,/^## Violations/p' "$out/report.md" | grep -c 'witness row [0-9]')" -lt 1 ]; then
    fail "adapter $name: report.md has no Library behaviour section citing witness rows"
    return
  fi
  for kv in "$@"; do
    k=${kv%%=*} v=${kv#*=}
    if [ "$k" = killed_jobs ]; then
      # the state in the final snapshot of every job killed after its claim
      got=$(node -e '
        const ev = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l))
        const killed = new Set(ev.filter((e) => e.type === "fault" && e.fault === "kill_after_claim").map((e) => e.job))
        const st = [...new Set(ev.filter((e) => e.type === "snapshot" && killed.has(e.job)).map((e) => e.state))]
        console.log(st.length === 1 ? st[0] : st.join("+") || "none")' "$out/ledger.jsonl")
      if [ "$got" != "$v" ]; then
        fail "adapter $name (seed $seed): the jobs killed after their claim are $got in the final snapshot, expected $v"
        return
      fi
      continue
    fi
    got=$(verdict "$out/results.json" "$k")
    if [ "$got" != "$v" ]; then
      fail "adapter $name (seed $seed): $k is $got, expected $v ($(grep "^$k " "$out.log" | cut -c1-200))"
      return
    fi
  done
  pass "adapter $name (seed $seed): exit $rc, faults fired as planned, $*; $(tail -n1 "$out.log")"
}

if [ "$what" = all ] || [ "$what" = libraries ]; then
  if [ ! -d adapters/node/node_modules/pg-boss ] || [ ! -d adapters/node/node_modules/graphile-worker ]; then
    fail "adapters/node/node_modules lacks pg-boss or graphile-worker: install Node 20 or newer with npm and run scripts/install-deps.sh"
  fi
  # pg-boss and Minion give a killed worker's job back (expiry; repair of a
  # worker without heartbeat); graphile-worker keeps it locked for 4 hours
  # (the third word: at least that many witness rows, one insert per job
  # and more). The witness: pg-boss's own expiry and Minion's repair are
  # declared in their files; graphile-worker and Minion change only rows
  # their owner holds (witness_owner PASS); pg-boss honours a stale
  # complete (no owner check in completeJobs), so its witness_owner is
  # what the timing gives and not asserted
  library pgboss 215494473 48 killed_jobs=done recovery=PASS bounded_failure=PASS \
    double_complete=PASS acked_durable=PASS batch_bound=PASS witness_agrees=PASS
  library graphile_worker 58991080 32 killed_jobs=inflight double_complete=PASS acked_durable=PASS \
    batch_bound=PASS witness_agrees=PASS witness_owner=PASS
  library minion 151415781 48 killed_jobs=done recovery=PASS bounded_failure=PASS \
    double_complete=PASS acked_durable=PASS batch_bound=PASS witness_agrees=PASS witness_owner=PASS
fi
echo "tests/adapters.sh: $fails failed"
[ "$fails" -eq 0 ]
