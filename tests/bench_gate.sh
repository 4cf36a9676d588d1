#!/usr/bin/env bash
# tests/bench_gate.sh [--seeds K] [--jobs N] [PART [NAME...]]: the gate's
# detection power and wall time (issue 12).  A benchmark that prints
# numbers, not a test: `make check` does not run it (about an hour with 10
# seeds on 2 cores; the parts can run side by side, each on servers of its
# own).  PART is one of
#
#   mutants [NAME...]  `qchaos mutation --only NAME --seeds K` for every
#            PostgreSQL, policy and MariaDB (mariadb:NAME, on an ephemeral
#            MariaDB) mutant (or the NAMEs given): each
#            through the gate battery of its model, its own scenario first,
#            up to the first run that fails an expected checker
#   correct  `qchaos gate --seeds K --jobs N` on skip_locked, skip_locked_txn
#            and group_fifo (--groups): the whole battery, a database per
#            slot on one ephemeral PostgreSQL
#   mariadb  `qchaos gate` on backends/mariadb/skip_locked.sql (K seeds, N
#            at a time, each run on an ephemeral MariaDB of its own), and
#            `qchaos gate --fail-fast` on the MariaDB mutant, once per seed
#   plain    `qchaos gate --fail-fast MUTANT` as a user runs it (no mutant
#            header used), seed 1, on every PostgreSQL mutant
#   all      mutants, correct, mariadb (the default)
#
# Prints, per protocol: seeds caught (mutant) or passed (correct) out of K,
# and the wall time; the machine's load average before and after.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seeds=10 jobs=3 what=all
names=()
while [ $# -gt 0 ]; do
  case "$1" in
  --seeds) seeds=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  mutants | correct | mariadb | plain | all) what=$1; shift; names=("$@"); break ;;
  *) echo "usage: tests/bench_gate.sh [--seeds K] [--jobs N] [mutants [NAME...]|correct|mariadb|plain|all]" >&2; exit 2 ;;
  esac
done
bin=${QC_QCHAOS_BIN:-./qchaos}
work=$(mktemp -d /tmp/qchaos-bench-gate.XXXXXX)
chmod 755 "$work"
cleanup() {
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1 || true
  scripts/mariadb-ephemeral.sh destroy "$work/mdb" >/dev/null 2>&1 || true
}
trap cleanup EXIT
echo "bench_gate: $what, $seeds seeds, $jobs runs at a time, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), results in $work"

secs() { echo $(($(date +%s) - $1)); }

if [ "$what" = mutants ] || [ "$what" = all ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  odbc=$(scripts/mariadb-ephemeral.sh start "$work/mdb" | tail -n1) || exit 3
  if [ ${#names[@]} -eq 0 ]; then
    for m in backends/postgres/mutants/*.sql; do names+=("$(basename "$m" .sql)"); done
    for m in scenarios/mutants/*.ini; do names+=("policy:$(basename "$m" .ini)"); done
    for m in backends/mariadb/mutants/*.sql; do names+=("mariadb:$(basename "$m" .sql)"); done
  fi
  echo "== PostgreSQL mutants through the gate battery, $seeds seeds"
  for name in "${names[@]}"; do
    t0=$(date +%s)
    odbc_arg=()
    case "$name" in mariadb:*) odbc_arg=(--odbc "$odbc") ;; esac
    "$bin" mutation --only "$name" --seeds "$seeds" --dsn "$dsn" "${odbc_arg[@]}" --out "$work/mutation/$name" \
      >"$work/mutation-${name//:/_}.log" 2>&1
    rc=$?
    row=$(grep -E "^(policy:)?$name " "$work/mutation-${name//:/_}.log" | tr -s ' ')
    fp=$(awk '/^correct protocol on scenario/ {on = 1; next} on && NF {print}' \
      "$work/mutation-${name//:/_}.log" | awk '{split($NF, a, "/"); s += a[1]} END {print s + 0}')
    printf '   %s  (exit %d, %d s; false positives of the correct protocol there: %d)\n' \
      "${row:-$name: no row}" "$rc" "$(secs "$t0")" "$fp"
  done
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
fi

if [ "$what" = correct ] || [ "$what" = all ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  echo "== PostgreSQL correct protocols through the whole battery, $seeds seeds, $jobs at a time"
  for spec in skip_locked: skip_locked_txn: group_fifo:--groups; do
    p=${spec%%:*} flags=${spec#*:}
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" gate "backends/postgres/$p.sql" $flags --seeds "$seeds" --jobs "$jobs" --dsn "$dsn" \
      --out "$work/correct-$p" >"$work/correct-$p.log" 2>&1
    rc=$?
    printf '   %-16s exit %d, %4d s wall (%d s per seed); %s\n' "$p" "$rc" "$(secs "$t0")" \
      $(($(secs "$t0") / seeds)) "$(grep -o '[0-9]* of [0-9]* seeds passed every scenario; [0-9]* runs failed a checker' "$work/correct-$p.log")"
    grep -E '^ {4}|^[a-z].* [1-4] +[0-9.]+  [a-z]' "$work/correct-$p.log" | head -n 10 | sed 's/^/      /'
  done
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
fi

if [ "$what" = mariadb ] || [ "$what" = all ]; then
  t0=$(date +%s)
  "$bin" gate backends/mariadb/skip_locked.sql --seeds "$seeds" --jobs "$jobs" \
    --out "$work/mariadb-correct" >"$work/mariadb-correct.log" 2>&1
  rc=$?
  echo "== MariaDB: backends/mariadb/skip_locked.sql, $seeds seeds, $jobs at a time: exit $rc, $(secs "$t0") s"
  grep -E 'seeds passed|verdict' "$work/mariadb-correct.log" | sed 's/^/   /'
  caught=0 t0=$(date +%s)
  for s in $(seq 1 "$seeds"); do
    "$bin" gate backends/mariadb/mutants/select_then_update.sql --seed "$s" --fail-fast \
      --out "$work/mariadb-mutant/seed$s" >"$work/mariadb-mutant-$s.log" 2>&1
    rc=$?
    grep -q 'exclusive_claim' "$work/mariadb-mutant/seed$s/gate.json" 2>/dev/null && [ $rc -eq 1 ] &&
      caught=$((caught + 1))
  done
  echo "== MariaDB mutant select_then_update: exclusive_claim failed the gate in $caught of $seeds seeds ($(secs "$t0") s)"
fi

if [ "$what" = plain ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || exit 3
  echo "== qchaos gate --fail-fast on every PostgreSQL mutant, seed 1"
  for m in backends/postgres/mutants/*.sql; do
    flags=""
    grep -q '^-- expect:.*group_' "$m" && flags="--groups"
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" gate "$m" $flags --fail-fast --dsn "$dsn" --out "$work/plain/$(basename "$m" .sql)" \
      >"$work/plain-$(basename "$m" .sql).log" 2>&1
    rc=$?
    printf '   %-32s exit %d in %3d s  %s\n' "$(basename "$m" .sql)" "$rc" "$(secs "$t0")" \
      "$(grep -o 'verdict: [A-Z]*' "$work/plain-$(basename "$m" .sql).log")"
  done
fi
echo "bench_gate: load $(cut -d' ' -f1-3 /proc/loadavg)"
