#!/usr/bin/env bash
# A benchmark, not a test: for each PostgreSQL mutant, its first failing run
# (the scenario of its header, seeds 1..3), then R replays of that run
# (qchaos run --replay): how many fail the same expected checker on the
# same first job.  Prints a line per mutant and the totals.
#   tests/bench_replay.sh DSN [R [NAME...]]   (NAMEs: only those mutants)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:?usage: tests/bench_replay.sh DSN [R]}
R=${2:-10}
shift 2 2>/dev/null || shift $#
only=" $* "
work=${BENCH_DIR:-$(mktemp -d /tmp/qchaos-replay.XXXXXX)}
mkdir -p "$work"
q=${QC_QCHAOS_BIN:-./qchaos}
total=0 good=0
# a replay runs one action at a time: keep the runs small (at most JOBS jobs)
JOBS=${JOBS:-200}
jobs_cap() {
  local n
  n=$(sed -n 's/^jobs *= *//p' "$1" | head -1)
  if [ -z "$n" ] || [ "$n" -gt "$JOBS" ]; then echo "--jobs $JOBS"; fi
}
for m in backends/postgres/mutants/*.sql; do
  name=$(basename "$m" .sql)
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || continue
  scen=$(sed -n 's/^-- scenario: *//p' "$m" | head -1)
  expect=$(sed -n 's/^-- expect: *//p' "$m" | head -1 | tr -d ' ')
  [ -n "$scen" ] || continue
  if grep -q '^pooler *= *pgbouncer' "$scen" 2>/dev/null; then
    echo "$name: skipped (its scenario needs a PgBouncer of its own)"
    continue
  fi
  orig=""
  mkdir -p "$work/$name"
  for s in 1 2 3; do
    d="$work/$name/orig-$s"
    "$q" run "$scen" --protocol "$m" --seed $s --dsn "$dsn" --out "$d" --force --no-progress \
      $(jobs_cap "$scen") \
      >"$d.log" 2>&1
    if [ $? -eq 1 ]; then orig=$d; break; fi
  done
  if [ -z "$orig" ]; then
    echo "$name: no failing run in seeds 1..3"
    continue
  fi
  # the first expected checker that failed, and its first job
  chk="" job=""
  for c in ${expect//,/ }; do
    j=$(jq -r --arg c "$c" '.checkers[] | select(.name==$c and .verdict=="FAIL") |
         .violations[0].job // "none"' "$orig/results.json")
    if [ -n "$j" ]; then chk=$c; job=$j; break; fi
  done
  if [ -z "$chk" ]; then
    echo "$name: the failing run failed none of its expected checkers ($expect)"
    continue
  fi
  same=0 t0=$(date +%s)
  for k in $(seq 1 "$R"); do
    out=$("$q" run --replay "$orig" --dsn "$dsn" --out "$orig/replay-$k" --force \
      --no-progress 2>&1)
    j=$(jq -r --arg c "$chk" '.checkers[] | select(.name==$c and .verdict=="FAIL") |
         .violations[0].job // "none"' "$orig/replay-$k/results.json" 2>/dev/null)
    [ "$j" = "$job" ] && same=$((same + 1))
    div=$(printf '%s\n' "$out" | grep -c "replay diverged")
    [ "$div" -gt 0 ] && dv=" (diverged later)" || dv=""
  done
  total=$((total + 1))
  [ "$same" -eq "$R" ] && good=$((good + 1))
  echo "$name: $(basename "$orig") $chk on job $job; replays $same/$R the same$dv; $(($(date +%s) - t0)) s"
done
echo "bench_replay: $good of $total mutants replayed the same checker on the same job in $R of $R"
