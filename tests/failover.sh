#!/usr/bin/env bash
# Failover on a replicated PostgreSQL (README "Failover"): starts a primary
# and a streaming replica with scripts/pg-replicated.sh, asynchronous then
# synchronous, and runs scenarios/failover_async.ini and failover_sync.ini
# on them (--dsn the multi-host conninfo, QCHAOS_TOPOLOGY_DIR the folder),
# then checks from results.json and the ledger:
#   sync:  exit 0, every judged checker PASS with opportunities, and
#          acked_durable says none of the completes acknowledged before the
#          failover was lost;
#   async: acked_durable FAIL with lost completes as evidence (each named
#          violation's first event is an ok complete with rows > 0 in the
#          ledger, its second a switch_snapshot row of the same job, not
#          done), or PASS with the line "none lost"; no_lost_jobs PASS.
#   both:  the ledger has the failover fault and its "failover promoted"
#          note with exit 0.
# Usage: tests/failover.sh [WORKDIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
work=${1:-$(mktemp -d /tmp/qchaos-failover.XXXXXX)}
mkdir -p "$work" && chmod 755 "$work"
fails=0
cleanup() { for m in async sync; do scripts/pg-replicated.sh destroy "$work/$m-topo" >/dev/null 2>&1 || true; done; }
trap cleanup EXIT
command -v jq >/dev/null || { echo "tests/failover.sh: jq is missing" >&2; exit 2; }

check() { # WHAT CONDITION-EXIT
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

for mode in async sync; do
  topo=$work/$mode-topo out=$work/$mode
  flag=""
  [ "$mode" = sync ] && flag=--sync
  dsn=$(scripts/pg-replicated.sh start "$topo" $flag 2>"$work/$mode-topo.log" | tail -n1)
  case "$dsn" in
  *target_session_attrs=read-write*) check "$mode: pg-replicated.sh start printed a multi-host DSN" 0 ;;
  *) check "$mode: pg-replicated.sh start printed a multi-host DSN (got '$dsn')" 1; cat "$work/$mode-topo.log"; continue ;;
  esac
  QCHAOS_TOPOLOGY_DIR=$topo ./qchaos run "scenarios/failover_$mode.ini" --dsn "$dsn" --seed 7 \
    --out "$out" --no-progress >"$work/$mode.log" 2>&1
  rc=$?
  scripts/pg-replicated.sh destroy "$topo" >/dev/null 2>&1
  r=$out/results.json l=$out/ledger.jsonl
  [ -f "$r" ] || { check "$mode: the run wrote results.json (exit $rc)" 1; tail -20 "$work/$mode.log"; continue; }
  grep -q '"type":"fault","fault":"failover"' "$l"
  check "$mode: the ledger has the failover fault" $?
  jq -c 'select(.type=="note" and .note=="failover promoted" and .exit==0)' "$l" | grep -q .
  check "$mode: the replica was promoted (note with exit 0)" $?
  ad=$(jq -c '.checkers[] | select(.name=="acked_durable")' "$r")
  echo "     acked_durable: $(jq -r '.verdict + ": " + .summary' <<<"$ad")"
  if [ "$mode" = sync ]; then
    check "sync: exit 0 (got $rc)" $((rc != 0))
    bad=$(jq -r '[.checkers[] | select(.judged and (.verdict != "PASS" or .opportunities <= 0)) | .name] | join(",")' "$r")
    check "sync: every judged checker PASS with opportunities${bad:+ (not: $bad)}" $([ -z "$bad" ]; echo $?)
    njudged=$(jq '[.checkers[] | select(.judged)] | length' "$r")
    check "sync: 4 checkers judged (got $njudged)" $((njudged != 4))
    grep -q 'acknowledged before the failover, none lost' <<<"$ad"
    check "sync: acked_durable states none was lost across the failover" $?
  else
    jq -c '.checkers[] | select(.name=="no_lost_jobs" and .verdict=="PASS")' "$r" | grep -q .
    check "async: no_lost_jobs PASS" $?
    v=$(jq -r '.verdict' <<<"$ad")
    if [ "$v" = FAIL ]; then
      n=$(jq -r '.violations_total' <<<"$ad")
      grep -q "acknowledged before the failover, $n of them lost" <<<"$ad"
      check "async: acked_durable FAIL counts $n lost completes in its summary" $?
      # every named violation is proved by the ledger: an ok complete
      # (rows > 0) of the job, and the promoted replica's row of it not done
      okv=0
      while read -r job s1 s2; do
        jq -c --argjson s "$s1" --argjson j "$job" \
          'select(.seq==$s and .type=="ok" and .op=="complete" and .job==$j and .rows>0)' "$l" | grep -q . &&
          jq -c --argjson s "$s2" --argjson j "$job" \
            'select(.seq==$s and .type=="switch_snapshot" and .job==$j and .state!="done")' "$l" | grep -q . ||
          { echo "     not proved: job $job seq $s1 $s2"; okv=1; }
      done < <(jq -r '.violations[] | select(.explanation | test("before the failover")) | "\(.job) \(.seq[0]) \(.seq[1])"' <<<"$ad" | head -5)
      check "async: the first lost completes are proved by the ledger's events" $okv
      check "async: exit 1 (got $rc)" $((rc != 1))
    else
      grep -q 'none lost' <<<"$ad"
      check "async: acked_durable $v states that none was lost" $?
    fi
  fi
done
echo "tests/failover.sh: $fails failed"
[ "$fails" -eq 0 ]
