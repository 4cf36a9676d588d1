#!/usr/bin/env bash
# The built-in proxy's cost (issue 17: "the harness must never be the
# bottleneck"): jobs/s of the same run with the workers connected directly
# and through qchaos's loopback proxy with no toxic ([network] proxy = on,
# nothing else), on one ephemeral PostgreSQL (or --dsn DSN), in alternating
# order (direct, proxy, direct, proxy ...) so that autovacuum and a busy
# machine weigh on both alike.  A benchmark, not a test: it prints numbers
# and fails only when a run does not pass.
#
#   tests/bench_proxy.sh [--dsn DSN] [--jobs N] [--workers N] [--rounds R]
#                        [--protocol FILE]
#   make bench-proxy     (the defaults: 20000 jobs, 16 workers, 3 rounds)
#
# Prints one line per run (with the proxy's own counters) and then, per
# setting, the median jobs/s and the proxy's cost as the ratio of the
# medians.
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
  *) echo "bench_proxy: unknown option '$1' (expected --dsn, --jobs, --workers, --rounds, --protocol)" >&2
     exit 2 ;;
  esac
done
[ -x ./qchaos ] || { echo "bench_proxy: build ./qchaos first (make)" >&2; exit 2; }

work=$(mktemp -d /tmp/qchaos-bench-proxy.XXXXXX)
chmod 755 "$work"
own=0
cleanup() {
  [ "$own" = 1 ] && scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$dsn" ]; then
  dsn=$(scripts/pg-ephemeral.sh start "$work/pg" 2>/dev/null | tail -n1) || {
    echo "bench_proxy: could not start PostgreSQL" >&2
    exit 3
  }
  own=1
fi
# the default scenario, once as it is and once with the proxy on
{ cat scenarios/default.ini; printf '\n[network]\nproxy = off\n'; } >"$work/direct.ini"
{ cat scenarios/default.ini; printf '\n[network]\nproxy = on\n'; } >"$work/proxy.ini"
server=$(psql "$dsn" -XAtc "SHOW server_version" 2>/dev/null)
echo "bench_proxy: PostgreSQL $server, $protocol, $jobs jobs, $workers workers, $rounds rounds," \
  "$(nproc) cores; autovacuum $(psql "$dsn" -XAtc "SHOW autovacuum" 2>/dev/null)," \
  "synchronous_commit $(psql "$dsn" -XAtc "SHOW synchronous_commit" 2>/dev/null)," \
  "fsync $(psql "$dsn" -XAtc "SHOW fsync" 2>/dev/null)"

declare -A rates
for r in $(seq 1 "$rounds"); do
  for w in direct proxy; do
    out="$work/$w-$r"
    ./qchaos run "$work/$w.ini" --protocol "$protocol" --dsn "$dsn" --jobs "$jobs" \
      --workers "$workers" --seed "$r" --out "$out" --no-progress >"$out.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "bench_proxy: the $w run (round $r) exited $rc:" >&2
      tail -n 5 "$out.log" >&2
      exit 1
    fi
    rate=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["metrics"]["jobs_per_s"])' \
      "$out/results.json")
    counters=$(grep -o 'proxy: [0-9]* connections, [0-9]* bytes to the server, [0-9]* to the workers' \
      "$out.log" || true)
    echo "round $r  $w  $rate jobs/s${counters:+  ($counters)}"
    rates[$w]="${rates[$w]:-} $rate"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
d=$(median "${rates[direct]}") p=$(median "${rates[proxy]}")
echo "median: direct $d jobs/s, through the proxy (no toxic) $p jobs/s"
awk -v a="$d" -v b="$p" 'BEGIN {printf "proxy cost: %.0f%% of the throughput (proxy / direct = %.2f)\n", (1 - b / a) * 100, b / a}'
