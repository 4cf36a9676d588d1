#!/usr/bin/env bash
# Sharded runs (issue 16 "Runs larger than one machine"), on one real
# PostgreSQL (QC_TEST_DSN; needs ./qchaos or QC_QCHAOS_BIN, and jq):
#   - for each scenario (default, kill_after_claim, stall_beyond_lease,
#     lost_ack; a small job count), the same seed as one process and as 4
#     processes (`qchaos run --shard I/4`, side by side on the one
#     database), the 4 ledgers merged by `qchaos audit`; every judged
#     checker must have the same verdict in both, and no checker may FAIL
#     in the merged audit (a false alarm made by the merge);
#   - the select_then_update mutant split over 2 processes: exclusive_claim
#     FAILs in the merged audit; with one worker per shard (worker w is
#     shard w % 2) every violation is between the two ledgers;
#   - a shard's input errors: a bad --shard, --shard without --dsn; an
#     audit given 3 of the 4 shards' ledgers (exit 2: a missing shard's
#     events would look like lost or foreign jobs).
# Prints one line per check; exit 0 when all pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${QC_TEST_DSN:?tests/shard.sh needs QC_TEST_DSN (a libpq conninfo)}"
dsn=$QC_TEST_DSN
bin=${QC_QCHAOS_BIN:-./qchaos}
tmp=$(mktemp -d /tmp/qchaos-shard.XXXXXX)
# The one-process runs go to a database of their own on the same server,
# side by side with the sharded runs of the same scenario (two runs never
# share a queue table); dropped at the end.
onedb=qchaos_shard_one
psql "$dsn" -qAt -c "DROP DATABASE IF EXISTS $onedb" -c "CREATE DATABASE $onedb" >/dev/null 2>&1 ||
  { echo "   FAILED: cannot create the database $onedb"; exit 1; }
dsn_one="$dsn dbname=$onedb"
trap 'rm -rf "$tmp"; psql "$dsn" -qAt -c "DROP DATABASE IF EXISTS $onedb" >/dev/null 2>&1' EXIT
failed=0
ok() { echo "   ok: $*"; }
bad() { echo "   FAILED: $*"; failed=1; }

# verdicts FILE: "name verdict judged" per checker, sorted
verdicts() { jq -r '.checkers[] | "\(.name) \(.verdict) \(.judged)"' "$1" | sort; }

# sharded NAME N SEED ARGS...: N shards side by side, then the merged audit
# in $tmp/NAME-merged; returns the audit's exit code
sharded() {
  local name=$1 n=$2 seed=$3 i rc=0 pids=()
  shift 3
  for ((i = 0; i < n; i++)); do
    "$bin" run "$@" --seed "$seed" --dsn "$dsn" --shard "$i/$n" --out "$tmp/$name-s$i" \
      --no-progress >"$tmp/$name-s$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < n; i++)); do
    if ! wait "${pids[$i]}"; then
      bad "$name: shard $i of $n exited non-zero"
      sed 's/^/      /' "$tmp/$name-s$i.log" | tail -n 5
      rc=1
    fi
  done
  [ $rc -eq 0 ] || return 99
  local ledgers=()
  for ((i = 0; i < n; i++)); do ledgers+=("$tmp/$name-s$i/ledger.jsonl"); done
  "$bin" audit --out "$tmp/$name-merged" "${ledgers[@]}" >"$tmp/$name-merged.log" 2>&1
}

# --- input errors ---------------------------------------------------------
"$bin" run default --shard 4/4 --dsn "$dsn" --out "$tmp/x" >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "shard expects I/N" "$tmp/out" && ok "--shard 4/4 refused (exit 2)" ||
  bad "--shard 4/4: $(head -c 300 "$tmp/out")"
env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGSERVICE "$bin" run default --shard 0/2 \
  --out "$tmp/x" >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "shard needs the database" "$tmp/out" &&
  ok "--shard without --dsn refused (exit 2)" || bad "--shard without dsn: $(head -c 300 "$tmp/out")"

# --- one process against 4, per scenario -----------------------------------
for spec in "default 300" "kill_after_claim 300" "stall_beyond_lease 16" "lost_ack 300"; do
  set -- $spec
  name=$1 jobs=$2
  t0=$(date +%s)
  "$bin" run "$name" --jobs "$jobs" --seed 11 --dsn "$dsn_one" --out "$tmp/$name-one" \
    --no-progress >"$tmp/$name-one.log" 2>&1 &
  onepid=$!
  sharded "$name" 4 11 "$name" --jobs "$jobs"
  merged=$?
  wait $onepid
  one=$?
  if [ $merged -eq 99 ] || [ ! -f "$tmp/$name-merged/results.json" ]; then
    bad "$name: no merged audit"
    sed 's/^/      /' "$tmp/$name-merged.log" 2>/dev/null | tail -n 5
    continue
  fi
  verdicts "$tmp/$name-one/results.json" >"$tmp/$name-one.v"
  verdicts "$tmp/$name-merged/results.json" >"$tmp/$name-merged.v"
  diffs=$(join <(awk '$3 == "true"' "$tmp/$name-one.v") "$tmp/$name-merged.v" |
    awk '$2 != $4 { print $1 ": one process " $2 ", 4 shards " $4 }')
  if [ -z "$diffs" ] && [ "$one" -eq "$merged" ]; then
    ok "$name: 4 shards merge into the verdicts of one process (exit $one; $(awk '$3 == "true"' \
      "$tmp/$name-one.v" | wc -l) judged checkers) in $(($(date +%s) - t0)) s"
  else
    bad "$name: exit one process $one, merged $merged; $diffs"
    grep FAIL "$tmp/$name-merged.log" | head -n 5 | sed 's/^/      /'
  fi
  fails=$(jq -r '.checkers[] | select(.verdict == "FAIL") | .name' "$tmp/$name-merged/results.json")
  onefails=$(jq -r '.checkers[] | select(.verdict == "FAIL") | .name' "$tmp/$name-one/results.json")
  [ "$fails" = "$onefails" ] && ok "$name: no checker fails in the merge that does not in one process" ||
    bad "$name: failing checkers merged [$fails] one process [$onefails]"
  total=$(jq '[.checkers[] | select(.name == "no_lost_jobs") | .opportunities] | add' \
    "$tmp/$name-merged/results.json")
  [ "$total" = "$jobs" ] && ok "$name: the merged history holds all $jobs jobs" ||
    bad "$name: no_lost_jobs saw $total jobs, want $jobs"
done

# --- a shard's ledger missing: refused, not judged -------------------------
if [ -f "$tmp/default-s0/ledger.jsonl" ]; then
  "$bin" audit "$tmp/default-s0" "$tmp/default-s1" "$tmp/default-s2" >"$tmp/out" 2>&1
  [ $? -eq 2 ] && grep -q "not all of its shards" "$tmp/out" &&
    ok "3 of 4 shards' ledgers refused (exit 2)" || bad "3 of 4 ledgers: $(head -c 300 "$tmp/out")"
fi

# --- CI shards' folders merge in qchaos summary ------------------------------
# (as gate --shard writes them: OUT/SCENARIO/seedS; a share may be empty)
mkdir -p "$tmp/ci/out-0/default/seed11" "$tmp/ci/out-1/lost_ack/seed11" "$tmp/ci/out-2"
cp "$tmp/default-one/results.json" "$tmp/ci/out-0/default/seed11/" 2>/dev/null
cp "$tmp/lost_ack-one/results.json" "$tmp/ci/out-1/lost_ack/seed11/" 2>/dev/null
echo '{"schema":"qchaos-gate/1","runs":[]}' >"$tmp/ci/out-2/gate.json"
"$bin" summary --json "$tmp/ci/summary.json" "$tmp/ci/out-0" "$tmp/ci/out-1" "$tmp/ci/out-2" \
  >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(jq .runs "$tmp/ci/summary.json")" = 2 ] &&
  ok "summary merges 3 shards' folders (nested runs, one empty share): 2 runs, exit 0" ||
  bad "summary of the shards' folders: exit $rc, $(head -c 300 "$tmp/out")"

# --- a known violation split across two ledgers ----------------------------
# one worker per shard: any two live leases of one job are held in two
# ledgers, so every violation found spans them
sharded mutant 2 3 default --protocol backends/postgres/mutants/select_then_update.sql \
  --jobs 400 --workers 2
rc=$?
v="$tmp/mutant-merged/results.json"
if [ $rc -eq 1 ] && [ "$(jq -r '.checkers[] | select(.name == "exclusive_claim") | .verdict' "$v")" = FAIL ]; then
  ok "select_then_update over 2 shards: exclusive_claim FAILs in the merged audit (exit 1)"
else
  bad "select_then_update over 2 shards: audit exit $rc, exclusive_claim $(jq -r \
    '.checkers[] | select(.name == "exclusive_claim") | .verdict' "$v" 2>/dev/null)"
fi
# "job J claimed by worker A (seq ...) and by worker B (seq ...)": A and B
# of different shards (worker w runs in shard w % 2)
cross=$(jq -r '.checkers[] | select(.name == "exclusive_claim") | .violations[].explanation' "$v" 2>/dev/null |
  sed -n 's/.*claimed by worker \([0-9]*\) .* by worker \([0-9]*\) .*/\1 \2/p' |
  awk '($1 % 2) != ($2 % 2)' | wc -l)
stored=$(jq '[.checkers[] | select(.name == "exclusive_claim") | .violations[]] | length' "$v" 2>/dev/null)
[ "$cross" -gt 0 ] && [ "$cross" = "$stored" ] &&
  ok "select_then_update: all $cross stored violations are between the two shards' workers" ||
  bad "select_then_update: $cross of ${stored:-0} stored violations span the two ledgers"

exit $failed
