#!/usr/bin/env bash
# 1,000 workers through PgBouncer in transaction mode (issue 16: "the harness
# under half a core, RSS under 200 MB").  A benchmark, not a test: it prints
# numbers and fails only when the run does not pass.
#
#   tests/bench_pool1000.sh [--workers N] [--jobs N] [--pool N] [--idle-tail S]
#                           [--seed N] [--scenario FILE]
#   make bench-pool       (the defaults: scenarios/pgbouncer_1000.ini as it
#                          is, 1000 workers, 20000 jobs, 8 server connections,
#                          5 s of idle tail)
#
# It starts its own ephemeral PostgreSQL (scripts/pg-ephemeral.sh) and
# PgBouncer in front of it (scripts/pgbouncer-ephemeral.sh, CLIENTS =
# workers + 64, POOL = --pool), runs the scenario with --dsn (setup,
# monitor, snapshot: direct) and --worker-dsn (workers and reaper: through
# PgBouncer), and keeps the queue empty for --idle-tail seconds after the
# drain ([drain] idle_tail_s) so the idle polling of every worker is
# measured too.  Every 0.5 s it samples the server's client backends
# (pg_stat_activity, this sampler's own session left out) and PgBouncer's
# SHOW POOLS (server connections, clients waiting).  Prints:
#   workers, jobs, jobs/s (acknowledged completes over the work time),
#   harness CPU s (user+sys of the qchaos process from its first worker
#   start to the workers' join: results.json metrics.harness), cores
#   (CPU s per s of run), CPU ms per 1,000 jobs, peak RSS MB during the run
#   and of the whole process (with the audit and reports; the kernel's
#   ru_maxrss of the child), idle: empty claims per second over the idle
#   tail and the harness's cores then, PgBouncer's CPU s, the server
#   connections used (PgBouncer's server side at most, all client backends
#   at most) and the most clients PgBouncer had waiting for one;
# and writes the same to results/bench/pool1000.json (BENCH_OUT overrides
# the folder).  QCHAOS=PATH measures another build (a before/after; one
# without metrics.harness shows only the whole process's numbers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

workers=1000 jobs=20000 pool=8 tail_s=5 seed=1 scenario=scenarios/pgbouncer_1000.ini
while [ $# -gt 0 ]; do
  case $1 in
  --workers) workers=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  --pool) pool=$2; shift 2 ;;
  --idle-tail) tail_s=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  --scenario) scenario=$2; shift 2 ;;
  *) echo "bench_pool1000: unknown option '$1' (expected --workers, --jobs, --pool, --idle-tail, --seed, --scenario)" >&2
     exit 2 ;;
  esac
done
die() { echo "bench_pool1000: $*" >&2; exit 2; }
q=${QCHAOS:-./qchaos}
[ -x "$q" ] || die "build $q first (make)"
[ -f "$scenario" ] || die "scenario '$scenario' not found"
command -v jq >/dev/null || die "jq not found (scripts/install-deps.sh installs it)"
command -v python3 >/dev/null || die "python3 not found"
out_dir=${BENCH_OUT:-results/bench}
mkdir -p "$out_dir" || die "cannot create $out_dir"

work=$(mktemp -d /tmp/qchaos-bench-pool.XXXXXX)
chmod 755 "$work"
sampler=""
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  scripts/pgbouncer-ephemeral.sh stop "$work/pgb" >/dev/null 2>&1
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
  [ "${BENCH_KEEP:-0}" = 1 ] && echo "bench_pool1000: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

dsn=$(scripts/pg-ephemeral.sh start "$work/pg" 2>"$work/pg.log" | tail -n1)
[ -n "$dsn" ] || { cat "$work/pg.log" >&2; exit 3; }
pgb=$(scripts/pgbouncer-ephemeral.sh start "$work/pgb" "$dsn" $((workers + 64)) "$pool" \
  2>"$work/pgb.log" | tail -n1)
[ -n "$pgb" ] || { cat "$work/pgb.log" >&2; exit 3; }
admin=$(sed 's/dbname=[^ ]*/dbname=pgbouncer/' <<<"$pgb")
pgb_pid=$(cat "$work/pgb/pgbouncer.pid")

# the scenario with its protocol's path made absolute (the copy lives in
# $work) and the idle tail added
dir=$(cd "$(dirname "$scenario")" && pwd)
awk -v dir="$dir" -v tail_s="$tail_s" '
  /^[ \t]*protocol[ \t]*=/ { sub(/=[ \t]*/, "= "); split($0, a, "= "); p = a[2];
                              if (p !~ /^\//) p = dir "/" p; print "protocol = " p; next }
  /^[ \t]*idle_tail_s[ \t]*=/ { next }
  /^[ \t]*pool_size[ \t]*=/ { next }   # the pool is --pool, PgBouncer is ours
  { print }
  END { print "[drain]"; print "idle_tail_s = " tail_s }' "$scenario" >"$work/scenario.ini"

settings=$(psql "$dsn" -XAtc "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name)
  FROM pg_settings WHERE name IN ('server_version','max_connections','shared_buffers','fsync',
  'synchronous_commit','autovacuum','autovacuum_naptime')")
echo "bench_pool1000: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); server: $settings"
echo "bench_pool1000: $scenario, $workers workers, $jobs jobs, PgBouncer transaction pooling with" \
  "$pool server connections, $tail_s s idle tail, seed $seed"

# clock ticks of a process (utime + stime)
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
tck=$(getconf CLK_TCK)

# the sampler: server client backends, PgBouncer's server connections and
# waiting clients, every 0.5 s
(
  while :; do
    b=$(psql "$dsn" -XAtc "SELECT count(*) FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" 2>/dev/null)
    # columns by name: their positions differ between PgBouncer versions
    p=$(psql "$admin" -XA -F' ' -c "SHOW POOLS" 2>/dev/null | awk '
      NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $1 != "pgbouncer" && NF > 3 {
        sv += $c["sv_active"] + $c["sv_idle"] + $c["sv_used"] + $c["sv_tested"] + $c["sv_login"]
        w += $c["cl_waiting"] }
      END { print sv + 0, w + 0 }')
    echo "${b:-0} ${p:-0 0}"
    sleep 0.5
  done
) >"$work/samples" 2>/dev/null &
sampler=$!

pgb_t0=$(ticks "$pgb_pid")
# qchaos as a child of python, for the kernel's peak RSS and CPU of the
# whole process (os.wait4's rusage)
python3 - "$work/rusage" "$q" run "$work/scenario.ini" --dsn "$dsn" --worker-dsn "$pgb" \
  --workers "$workers" --jobs "$jobs" --seed "$seed" --out "$work/run" --no-progress \
  >"$work/run.log" 2>&1 <<'PY'
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%d %.3f %.3f %d\n" % (os.waitstatus_to_exitcode(status), ru.ru_utime, ru.ru_stime,
                                   ru.ru_maxrss))
PY
read -r rc all_user all_sys all_rss_kb <"$work/rusage"
pgb_t1=$(ticks "$pgb_pid")
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
sampler=""
if [ "$rc" -ne 0 ]; then
  echo "bench_pool1000: the run exited $rc:" >&2
  tail -n 30 "$work/run.log" >&2
  BENCH_KEEP=1
  exit 1
fi

r=$work/run/results.json
m() { jq -r "$1 // \"null\"" "$r"; }
# the idle tail: empty claims answered from its start note to the last one
read -r idle_polls idle_s < <(jq -rs '
  (map(select(.type == "note" and (.note // "" | startswith("drained: idle tail")))) | .[0].t) as $t0
  | if $t0 == null then "0 0" else
      (map(select(.type == "ok" and .op == "claim" and .rows == 0 and .t >= $t0))) as $e
      | "\($e | length) \((($e | map(.t) | max // $t0) - $t0) / 1000)"
    end' "$work/run/ledger.jsonl")
idle_s=$(awk -v s="$idle_s" 'BEGIN { printf "%.2f", s }')
idle_rate=$(awk -v n="$idle_polls" -v s="$idle_s" 'BEGIN { printf "%.0f", (s > 0) ? n / s : 0 }')
read -r max_backends max_sv max_wait < <(awk '
  { if ($1 > b) b = $1; if ($2 > s) s = $2; if ($3 > w) w = $3 } END { print b + 0, s + 0, w + 0 }' \
  "$work/samples")
pgb_cpu=$(awk -v a="$pgb_t0" -v b="$pgb_t1" -v t="$tck" 'BEGIN { printf "%.2f", (b - a) / t }')
all_cpu=$(awk -v u="$all_user" -v s="$all_sys" 'BEGIN { printf "%.2f", u + s }')
all_rss=$(awk -v k="$all_rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')

printf '%-46s %s\n' \
  "workers" "$(m .metrics.workers)" \
  "jobs" "$(m .metrics.jobs)" \
  "jobs/s (over the work time)" "$(m .metrics.jobs_per_s) (work $(m .metrics.work_s) s)" \
  "harness CPU s (run: workers start to join)" "$(m .metrics.harness.cpu_s) (user $(m .metrics.harness.cpu_user_s), sys $(m .metrics.harness.cpu_sys_s)) over $(m .metrics.harness.wall_s) s" \
  "harness cores (CPU s per s of run)" "$(m .metrics.harness.cores)" \
  "harness CPU ms per 1,000 jobs" "$(m .metrics.harness.cpu_ms_per_1000_jobs)" \
  "harness peak RSS MB (run)" "$(m .metrics.harness.peak_rss_mb)" \
  "qchaos process: CPU s, peak RSS MB (with audit)" "$all_cpu, $all_rss" \
  "idle tail: empty claims/s, harness cores" "$idle_rate ($idle_polls in $idle_s s), $(m .metrics.harness_idle_tail.cores)" \
  "PgBouncer CPU s" "$pgb_cpu" \
  "server connections used (PgBouncer's, max)" "$max_sv (pool $pool)" \
  "server client backends (all, max)" "$max_backends" \
  "clients waiting in PgBouncer (max)" "$max_wait" \
  "verdict" "$(m .verdict)"

jq -n --slurpfile r "$r" --arg settings "$settings" --argjson pool "$pool" \
  --argjson idle_polls "$idle_polls" --argjson idle_s "$idle_s" --argjson idle_rate "$idle_rate" \
  --argjson max_sv "$max_sv" --argjson max_backends "$max_backends" --argjson max_wait "$max_wait" \
  --argjson pgb_cpu "$pgb_cpu" --argjson all_cpu "$all_cpu" --argjson all_rss "$all_rss" \
  --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson cores "$(nproc)" '
  $r[0].metrics as $m
  | {schema: "qchaos-bench-pool1000/1", cores: $cores, load_after: $load, server: $settings,
     workers: $m.workers, jobs: $m.jobs, jobs_per_s: $m.jobs_per_s, work_s: $m.work_s,
     harness: $m.harness, harness_idle_tail: $m.harness_idle_tail,
     process: {cpu_s: $all_cpu, peak_rss_mb: $all_rss},
     idle: {empty_claims: $idle_polls, seconds: $idle_s, per_s: $idle_rate},
     pgbouncer: {pool_size: $pool, cpu_s: $pgb_cpu, server_connections_max: $max_sv,
                 clients_waiting_max: $max_wait},
     server_client_backends_max: $max_backends, verdict: $r[0].verdict}' \
  >"$out_dir/pool1000.json" && echo "bench_pool1000: written to $out_dir/pool1000.json"
