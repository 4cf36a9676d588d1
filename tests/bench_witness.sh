#!/usr/bin/env bash
# The witness's cost (issue 13): jobs/s of the same run without and with the
# server-side witness, on one ephemeral PostgreSQL (or --dsn DSN), in
# alternating order (off, on, off, on ...) so that autovacuum and a busy
# machine weigh on both alike.  A benchmark, not a test: it prints numbers
# and fails only when a run does not pass.
#
#   tests/bench_witness.sh [--dsn DSN] [--jobs N] [--workers N] [--rounds R]
#                          [--protocol FILE]
#   make bench-witness     (the defaults: 20000 jobs, 16 workers, 3 rounds)
#
# Prints one line per run and then, per setting, the median jobs/s, and the
# witness's cost as the ratio of the medians.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

dsn="" jobs=20000 workers=16 rounds=3 protocol=backends/postgres/skip_locked.sql
while [ $# -gt 0 ]; do
  case $1 in
  --dsn) dsn=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  --workers) workers=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --protocol) protocol=$2; shift 2 ;;
  *) echo "bench_witness: unknown option '$1' (expected --dsn, --jobs, --workers, --rounds, --protocol)" >&2
     exit 2 ;;
  esac
done
[ -x ./qchaos ] || { echo "bench_witness: build ./qchaos first (make)" >&2; exit 2; }

work=$(mktemp -d /tmp/qchaos-bench-witness.XXXXXX)
chmod 755 "$work"
own=0
cleanup() {
  [ "$own" = 1 ] && scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$dsn" ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" 2>/dev/null | tail -n1) || {
    echo "bench_witness: could not start PostgreSQL" >&2
    exit 3
  }
  own=1
fi
server=$(psql "$dsn" -XAtc "SHOW server_version" 2>/dev/null)
echo "bench_witness: PostgreSQL $server, $protocol, $jobs jobs, $workers workers, $rounds rounds," \
  "$(nproc) cores; autovacuum $(psql "$dsn" -XAtc "SHOW autovacuum" 2>/dev/null)," \
  "synchronous_commit $(psql "$dsn" -XAtc "SHOW synchronous_commit" 2>/dev/null)," \
  "fsync $(psql "$dsn" -XAtc "SHOW fsync" 2>/dev/null) (the queue table's own autovacuum settings" \
  "are the protocol's)"

declare -A rates
for r in $(seq 1 "$rounds"); do
  for w in off on; do
    out="$work/$w-$r"
    QCHAOS_WITNESS=$([ $w = on ] && echo yes || echo no) ./qchaos run scenarios/default.ini \
      --protocol "$protocol" --dsn "$dsn" --jobs "$jobs" --workers "$workers" --seed "$r" \
      --out "$out" --no-progress >"$out.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "bench_witness: the run with the witness $w (round $r) exited $rc:" >&2
      tail -n 5 "$out.log" >&2
      exit 1
    fi
    rate=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["metrics"]["jobs_per_s"])' \
      "$out/results.json")
    rows=$(grep -o 'witness: [0-9]* row changes of' "$out.log" | grep -o '[0-9]*' || true)
    echo "round $r  witness $w  $rate jobs/s${rows:+  ($rows witness rows)}"
    rates[$w]="${rates[$w]:-} $rate"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
off=$(median "${rates[off]}") on=$(median "${rates[on]}")
echo "median: without the witness $off jobs/s, with it $on jobs/s"
awk -v a="$off" -v b="$on" 'BEGIN {printf "witness cost: %.0f%% of the throughput (with / without = %.2f)\n", (1 - b / a) * 100, b / a}'
