#!/usr/bin/env bash
# Failover on a replicated PostgreSQL (README "Failover"): for each case
# starts a primary and a streaming replica with scripts/pg-replicated.sh
# (asynchronous, or --sync), runs the scenario on it (--dsn the multi-host
# conninfo the script printed, QCHAOS_TOPOLOGY_DIR its folder) and checks
# results.json and the ledger:
#   failover_sync, failover_switchover: exit 0, every judged checker PASS
#       with opportunities, and acked_durable says none of the completes
#       acknowledged before the switch was lost;
#   failover_async, failover_unfenced: acked_durable FAIL with the lost
#       completes as evidence (each named violation's first event is an ok
#       complete with rows > 0, its second a switch_snapshot row of the same
#       job, not done), or PASS with the words "none lost"; no_lost_jobs
#       and recovery PASS;
#   every case: the ledger has the fault and the switch ended well;
#   failover_switchover's workers go without target_session_attrs: their
#       writes on the replica before its promotion are fail events with
#       sqlstate 25006 and read_only true.
# Usage: tests/failover.sh [WORKDIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
work=${1:-$(mktemp -d /tmp/qchaos-failover.XXXXXX)}
mkdir -p "$work" && chmod 755 "$work"
fails=0
cases="failover_async:async:failover:lossy failover_sync:sync:failover:safe
failover_switchover:async:switchover:safe failover_unfenced:async:unfenced_primary:lossy"
cleanup() {
  local c
  for c in $cases; do scripts/pg-replicated.sh destroy "$work/${c%%:*}-topo" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
command -v jq >/dev/null || { echo "tests/failover.sh: jq is missing" >&2; exit 2; }

check() { # WHAT STATUS
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# has JQ-ARGS...: the jq select matched a line (jq 1.6's -e looks at the
# last output only; grep -c reads all of jq's output, so no SIGPIPE under
# pipefail)
has() { jq -c "$@" | grep -c . >/dev/null; }

# The script's own input errors, before any server starts.
scripts/pg-replicated.sh >/dev/null 2>&1
rc=$?
check "pg-replicated.sh without arguments: usage, exit 2 (got $rc)" $((rc != 2))
out=$(scripts/pg-replicated.sh start "$work/bad" --bogus 2>&1)
rc=$?
check "pg-replicated.sh start DIR --bogus: refused naming it (exit $rc)" \
  $((rc == 0 || $(grep -c 'unknown argument: --bogus' <<<"$out") == 0))
out=$(scripts/pg-replicated.sh failover "$work/none" 2>&1)
rc=$?
check "pg-replicated.sh failover on a folder without a topology: refused (exit $rc)" \
  $((rc == 0 || $(grep -c 'no pg-replicated topology in' <<<"$out") == 0))

# The four topologies start side by side (most of a start is waiting on
# initdb, pg_basebackup and the servers), each printing its DSN to a file.
for c in $cases; do
  IFS=: read -r name mode fault expect <<<"$c"
  flag=""
  [ "$mode" = sync ] && flag=--sync
  scripts/pg-replicated.sh start "$work/$name-topo" $flag 2>"$work/$name-topo.log" |
    tail -n1 >"$work/$name-topo.dsn" &
done
wait

for c in $cases; do
  IFS=: read -r name mode fault expect <<<"$c"
  topo=$work/$name-topo out=$work/$name
  flag=""
  [ "$mode" = sync ] && flag=--sync
  dsn=$(cat "$work/$name-topo.dsn")
  case "$dsn" in
  host=127.0.0.1,127.0.0.1\ port=*,*\ target_session_attrs=read-write*)
    check "$name: pg-replicated.sh start${flag:+ $flag} printed a multi-host DSN" 0 ;;
  *) check "$name: pg-replicated.sh start${flag:+ $flag} printed a multi-host DSN (got '$dsn')" 1
    cat "$work/$name-topo.log"; continue ;;
  esac
  # The switchover's workers connect without target_session_attrs: while
  # the primary is down and the replica not yet promoted, libpq takes them
  # to the replica, their writes are refused with 25006, and the ledger must
  # say so (read_only); they reconnect and lose nothing.
  wdsn=()
  [ "$name" = failover_switchover ] && wdsn=(--worker-dsn "${dsn/ target_session_attrs=read-write/}")
  QCHAOS_TOPOLOGY_DIR=$topo ./qchaos run "scenarios/$name.ini" --dsn "$dsn" "${wdsn[@]}" --seed 7 \
    --out "$out" --no-progress >"$work/$name.log" 2>&1
  rc=$?
  scripts/pg-replicated.sh destroy "$topo" >/dev/null 2>&1
  r=$out/results.json l=$out/ledger.jsonl
  [ -f "$r" ] || { check "$name: the run wrote results.json (exit $rc)" 1; tail -20 "$work/$name.log"; continue; }
  has --arg f "$fault" 'select(.type=="fault" and .fault==$f)' "$l"
  check "$name: the ledger has the $fault fault" $?
  if [ "$fault" = unfenced_primary ]; then
    has 'select(.type=="note" and .note=="unfenced_primary finished" and .exit==0)' "$l"
  else
    has --arg n "$fault promoted" 'select(.type=="note" and .note==$n and .exit==0)' "$l"
  fi
  check "$name: the switch ended well (its note, exit 0)" $?
  has 'select(.type=="switch_snapshot" and .job!=null)' "$l"
  check "$name: the switch snapshot was read" $?
  if [ "$name" = failover_switchover ]; then
    nro=$(jq -c 'select(.type=="fail" and .sqlstate=="25006" and .read_only==true)' "$l" | grep -c .)
    check "$name: writes refused by the read-only replica recorded as read_only ($nro)" $((nro == 0))
  fi
  ad=$(jq -c '.checkers[] | select(.name=="acked_durable")' "$r")
  echo "     acked_durable: $(jq -r '.verdict + ": " + .summary' <<<"$ad")"
  kind=$fault
  if [ "$expect" = safe ]; then
    check "$name: exit 0 (got $rc)" $((rc != 0))
    bad=$(jq -r '[.checkers[] | select(.judged and (.verdict != "PASS" or .opportunities <= 0)) | .name] | join(",")' "$r")
    check "$name: every judged checker PASS with opportunities${bad:+ (not: $bad)}" $([ -z "$bad" ]; echo $?)
    njudged=$(jq '[.checkers[] | select(.judged)] | length' "$r")
    check "$name: 5 checkers judged (got $njudged)" $((njudged != 5))
    grep -q "acknowledged before the $kind, none lost" <<<"$ad"
    check "$name: acked_durable states none was lost across the $kind" $?
  else
    has '.checkers[] | select(.name=="no_lost_jobs" and .verdict=="PASS")' "$r"
    check "$name: no_lost_jobs PASS" $?
    has '.checkers[] | select(.name=="recovery" and .verdict=="PASS" and .opportunities > 0)' "$r"
    check "$name: recovery PASS with opportunities (jobs in flight at the switch)" $?
    v=$(jq -r '.verdict' <<<"$ad")
    if [ "$v" = FAIL ]; then
      n=$(jq -r '.violations_total' <<<"$ad")
      grep -q "acknowledged before the $kind, $n of them lost" <<<"$ad"
      check "$name: acked_durable FAIL counts $n lost completes in its summary" $?
      # the first named violations are proved by the ledger: an ok complete
      # (rows > 0) of the job, and the new primary's row of it not done
      okv=0 seen=0
      while read -r job s1 s2; do
        seen=$((seen + 1))
        has --argjson s "$s1" --argjson j "$job" \
          'select(.seq==$s and .type=="ok" and .op=="complete" and .job==$j and .rows>0)' "$l" &&
          has --argjson s "$s2" --argjson j "$job" \
            'select(.seq==$s and .type=="switch_snapshot" and .job==$j and .state!="done")' "$l" ||
          { echo "     not proved: job $job seq $s1 $s2"; okv=1; }
      done < <(jq -r --arg k "$kind" '.violations[] | select(.explanation | contains("before the " + $k)) | "\(.job) \(.seq[0]) \(.seq[1])"' <<<"$ad" | head -5)
      check "$name: the first $seen lost completes are proved by the ledger's events" $((okv || seen == 0))
      check "$name: exit 1 (got $rc)" $((rc != 1))
    else
      grep -q 'none lost' <<<"$ad"
      check "$name: acked_durable $v states that none was lost" $?
    fi
  fi
done
echo "tests/failover.sh: $fails failed"
[ "$fails" -eq 0 ]
