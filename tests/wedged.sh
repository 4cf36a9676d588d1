#!/usr/bin/env bash
# Issue 17: wedged workers (C20) and clock skew (C24), end to end on the
# PostgreSQL server at $QC_TEST_DSN (or $1).
#   - scenarios/cases/c20_wedged.ini on the mutant that leaves its session
#     in an aborted transaction after an error: exit 1, worker_progress
#     FAIL by both rules (a failing streak, a session left in a transaction
#     between requests), with ledger seqs as evidence; on the correct
#     protocol: exit 0, worker_progress PASS with opportunities;
#   - scenarios/clock_skew.ini: the header records every worker's clock
#     offset; the mutant that stamps leases with :client_now_ms: exit 1,
#     no_early_reap FAIL (decision 1121); the one that renews with it:
#     exit 1, effects_once FAIL (skip_locked under the same skew: the gate
#     battery).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:-${QC_TEST_DSN:?QC_TEST_DSN or a DSN argument is needed}}
out=$(mktemp -d /tmp/qchaos-wedged.XXXXXX)
fails=0
bad() { echo "tests/wedged.sh: FAIL: $*" >&2; fails=$((fails + 1)); }
run() { # name scenario protocol|"" expected-exit
  local name=$1 sc=$2 proto=$3 want=$4 rc
  ./qchaos run "$sc" ${proto:+--protocol "$proto"} --dsn "$dsn" --seed 1 --out "$out/$name" \
    --no-progress >"$out/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq "$want" ] || bad "$name: exit $rc, expected $want (log: $out/$name.log)"
  grep -E '^(worker_progress|effects_once) |verdict' "$out/$name.log" | cut -c1-200
}
verdict() { jq -r --arg c "$2" '.checkers[] | select(.name == $c) | .verdict' "$out/$1/results.json"; }

run c20_mutant scenarios/cases/c20_wedged.ini backends/postgres/mutants/claim_no_rollback.sql 1
[ "$(verdict c20_mutant worker_progress)" = FAIL ] || bad "c20 mutant: worker_progress is not FAIL"
n_streak=$(jq '[.checkers[] | select(.name == "worker_progress") | .violations[]
  | select(.explanation | test("every request failed")) | select((.seq | length) >= 2)] | length' \
  "$out/c20_mutant/results.json")
n_open=$(jq '[.checkers[] | select(.name == "worker_progress") | .violations[]
  | select(.explanation | test("transaction left open")) | select((.seq | length) >= 4)] | length' \
  "$out/c20_mutant/results.json")
echo "c20 mutant: $n_streak wedged by failing requests, $n_open sessions left in a transaction"
[ "$n_streak" -ge 1 ] || bad "c20 mutant: no failing streak reported"
[ "$n_open" -ge 1 ] || bad "c20 mutant: no session left in a transaction reported"
run c20_correct scenarios/cases/c20_wedged.ini "" 0
[ "$(verdict c20_correct worker_progress)" = PASS ] || bad "c20 correct: worker_progress is not PASS"

run skew_mutant scenarios/clock_skew.ini backends/postgres/mutants/lease_on_client_clock.sql 1
# since decision 1121 (work that renews) the claim's own lease already past
# is what shows it: no_early_reap's short-lease rule
[ "$(verdict skew_mutant no_early_reap)" = FAIL ] || bad "skew mutant: no_early_reap is not FAIL"
run skew_renew scenarios/clock_skew.ini backends/postgres/mutants/renew_on_client_clock.sql 1
[ "$(verdict skew_renew effects_once)" = FAIL ] || bad "skew renew mutant: effects_once is not FAIL"
skews=$(head -n1 "$out/skew_mutant/ledger.jsonl" | jq -c '.clock_skew_ms')
[ "$skews" = "[0,-3000,0,-3000]" ] || bad "skew: header clock_skew_ms is $skews"
# skip_locked under the same skew: the gate battery runs it (clock_skew.ini
# is one of its scenarios), and tests/run.sh runs the gate

if [ "$fails" -eq 0 ]; then
  echo "tests/wedged.sh: all passed"
  rm -rf "$out"
fi
[ "$fails" -eq 0 ]
