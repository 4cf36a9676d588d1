#!/usr/bin/env bash
# A benchmark, not a test: for each mutant, its first failing run (the
# mutant's scenario, seeds 1..3), then R replays of that run (qchaos run
# --replay): how many fail the same expected checker on the original's first
# job (results.json replay.same_way), and how many of those qchaos calls
# reproduced (replay.reproduced: the order carried out through the
# original's evidence, decision 1136).
# Prints a line per mutant, with the load average, and the totals.
#   tests/bench_replay.sh DSN [R [NAME...]]
# NAME (none: every mutant below):
#   NAME            backends/postgres/mutants/NAME.sql on its `-- scenario:`
#   NAME            scenarios/mutants/NAME.ini, a policy mutant (its own
#                   protocol, its [checks] expect)
#   mariadb/NAME    backends/mariadb/mutants/NAME.sql, on the MariaDB of
#                   $QC_BENCH_ODBC (an ODBC connection string); skipped
#                   without it
# Environment: QC_QCHAOS_BIN (default ./qchaos), BENCH_DIR (default a new
# /tmp folder), JOBS (default 200: the most jobs a run gets), SEEDS (default
# "1 2 3": the seeds tried for the failing run), REUSE=1 (replay again the
# failing runs an earlier bench left in BENCH_DIR, instead of new ones: the
# same originals for another binary), ATTEMPTS (default: qchaos's own,
# 30: `--replay-attempts` of each replay; a replay that fails the same way
# within fewer attempts does with more, as its folder keeps the first
# attempt that did when none reproduced the order, decision 1136).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:?usage: tests/bench_replay.sh DSN [R [NAME...]]}
R=${2:-10}
shift 2 2>/dev/null || shift $#
work=${BENCH_DIR:-$(mktemp -d /tmp/qchaos-replay.XXXXXX)}
mkdir -p "$work"
q=${QC_QCHAOS_BIN:-./qchaos}
odbc=${QC_BENCH_ODBC:-}
SEEDS=${SEEDS:-1 2 3}
total=0 good=0 good_order=0
# a replay runs one action at a time: keep the runs small (at most JOBS jobs)
JOBS=${JOBS:-200}
jobs_cap() {
  local n
  n=$(sed -n 's/^jobs *= *//p' "$1" | head -1)
  if [ -z "$n" ] || [ "$n" -gt "$JOBS" ]; then echo "--jobs $JOBS"; fi
}
load() { cut -d' ' -f1 /proc/loadavg; }

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for m in backends/postgres/mutants/*.sql; do names+=("$(basename "$m" .sql)"); done
  for m in scenarios/mutants/*.ini; do names+=("$(basename "$m" .ini)"); done
  for m in backends/mariadb/mutants/*.sql; do names+=("mariadb/$(basename "$m" .sql)"); done
fi

for name in "${names[@]}"; do
  # what to run: scenario, protocol args, DSN, expected checkers
  proto=() rdsn=$dsn
  if [[ "$name" == mariadb/* ]]; then
    m=backends/mariadb/mutants/${name#mariadb/}.sql
    if [ -z "$odbc" ]; then echo "$name: skipped (no QC_BENCH_ODBC)"; continue; fi
    rdsn=$odbc
  elif [ -f "backends/postgres/mutants/$name.sql" ]; then
    m=backends/postgres/mutants/$name.sql
  elif [ -f "scenarios/mutants/$name.ini" ]; then
    m=""
    scen=scenarios/mutants/$name.ini
    expect=$(sed -n 's/^expect *= *//p' "$scen" | head -1 | tr -d ' ')
  else
    echo "$name: no such mutant"
    continue
  fi
  if [ -n "$m" ]; then
    [ -f "$m" ] || { echo "$name: no such mutant ($m)"; continue; }
    scen=$(sed -n 's/^-- scenario: *//p' "$m" | head -1)
    expect=$(sed -n 's/^-- expect: *//p' "$m" | head -1 | tr -d ' ')
    proto=(--protocol "$m")
  fi
  [ -n "$scen" ] || { echo "$name: no scenario"; continue; }
  if grep -q '^pooler *= *pgbouncer' "$scen" 2>/dev/null; then
    echo "$name: skipped (its scenario needs a PgBouncer of its own)"
    continue
  fi
  orig=""
  d0="$work/${name//\//_}"
  if [ "${REUSE:-0}" = 1 ]; then
    # the failing runs of an earlier bench in BENCH_DIR, replayed again
    for s in $SEEDS; do
      d="$d0/orig-$s"
      if jq -e '[.checkers[] | select(.verdict=="FAIL")] | length > 0' "$d/results.json" \
        >/dev/null 2>&1; then
        orig=$d
        rm -rf "$d"/replay-*
        break
      fi
    done
  else
    rm -rf "$d0"
    mkdir -p "$d0"
  fi
  for s in $SEEDS; do
    [ -z "$orig" ] || break
    d="$d0/orig-$s"
    "$q" run "$scen" "${proto[@]}" --seed "$s" --dsn "$rdsn" --out "$d" --force --no-progress \
      $(jobs_cap "$scen") \
      >"$d.log" 2>&1
    if [ $? -eq 1 ]; then orig=$d; break; fi
  done
  if [ -z "$orig" ]; then
    echo "$name: no failing run in seeds $SEEDS (load $(load))"
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
  same=0 inorder=0 t0=$(date +%s) l0=$(load) att=0 first_try=0 notes=""
  for k in $(seq 1 "$R"); do
    out=$("$q" run --replay "$orig" --dsn "$rdsn" --out "$orig/replay-$k" --force \
      ${ATTEMPTS:+--replay-attempts "$ATTEMPTS"} --no-progress 2>&1)
    printf '%s\n' "$out" >"$orig/replay-$k.log"
    # the same: qchaos says the replay reproduced the run (its order carried
    # out through the original's evidence, decision 1134) and the checker
    # failed on the original's first job
    j=$(jq -r --arg c "$chk" --arg j "$job" '[.checkers[] | select(.name==$c and .verdict=="FAIL") |
         .violations[] | (.job // "none") | tostring] |
         if index($j) != null then $j else (.[0] // "none") end' \
         "$orig/replay-$k/results.json" 2>/dev/null)
    rep=$(jq -r '.replay.reproduced // false' "$orig/replay-$k/results.json" 2>/dev/null)
    a=$(jq -r '.replay.attempts // 1' "$orig/replay-$k/results.json" 2>/dev/null)
    att=$((att + ${a:-1}))
    if [ "$j" = "$job" ]; then
      same=$((same + 1))
      [ "$rep" = true ] && inorder=$((inorder + 1))
      [ "${a:-1}" = 1 ] && first_try=$((first_try + 1))
    else
      # why it did not: the first divergence of its first attempt
      n=$(printf '%s\n' "$out" | grep -m1 -o "replay diverged: [^;]*" | cut -c1-160)
      notes="$notes
  replay $k: ${chk} on job ${j:-none}, reproduced $rep; ${n:-no divergence}"
    fi
  done
  total=$((total + 1))
  [ "$same" -eq "$R" ] && good=$((good + 1))
  [ "$inorder" -eq "$R" ] && good_order=$((good_order + 1))
  echo "$name: $(basename "$orig") $chk on job $job; replays $same/$R the same, $inorder/$R in" \
    "the run's order ($first_try at the first attempt, $att attempts in all);" \
    "$(($(date +%s) - t0)) s, load $l0 -> $(load)$notes"
done
echo "bench_replay: ${ATTEMPTS:+at most $ATTEMPTS attempts a replay: }$good of $total mutants replayed the same checker on the same job in $R of $R" \
  "($good_order of them in the run's order in $R of $R; load $(load))"
