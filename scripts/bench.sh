#!/usr/bin/env bash
# A benchmark, not a test (issue 16): it prints numbers and asserts nothing.
#
#   scripts/bench.sh            (or `make bench`)
#
# Part 1, the client's cost: on one ephemeral PostgreSQL (scripts/pg-ephemeral.sh)
# it runs, alternated A/B/A/B at every worker count,
#   A  pgbench -M prepared -n with the claim and complete statements of
#      PROTOCOL (default backends/postgres/skip_locked.sql) cut out of the
#      file as they are, on a queue table made by the protocol's own setup
#      and loaded with JOBS ready jobs (VACUUM ANALYZE, CHECKPOINT); each
#      client runs exactly floor(JOBS/W) claim+complete transactions;
#   B  qchaos run scenarios/default.ini with the same protocol, W workers,
#      JOBS jobs, faults off (the default scenario has none), the ledger on
#      (it always is), after a CHECKPOINT;
# and prints jobs/s of each, the ratio qchaos/pgbench, CPU ms per 1,000
# jobs of each client process (user+sys of the whole process from
# /usr/bin/time: for qchaos that includes its setup, enqueue, audit and
# reports, for pgbench only its run) and of the server (utime+stime of
# every postgres process: the live ones plus the postmaster's cutime/cstime
# of the backends that exited, /proc/PID/stat, before and after), and the
# server settings the numbers hold for.
#
# Part 2, the audit: generated ledgers of 1x, 2x, 4x, 8x AUDIT_EVENTS
# events (the header of the last qchaos run of part 1; per job an ok
# enqueue, an invoke and ok claim, an effect, an invoke and ok complete and a snapshot row, the
# lines qchaos writes), each audited by `qchaos audit` under /usr/bin/time:
# events/s of wall time, events per CPU second ("per core"), peak RSS and
# peak bytes per event (the process's whole RSS divided by the events), and
# the 1-minute load average as each audit started (the checkers run on
# threads: QC_AUDIT_THREADS=1 for one, README "Performance").
#
# Everything goes to results/bench/bench.json too (BENCH_OUT overrides the
# folder).  Environment: BENCH_WORKERS (default "1 4 16 32 64", with
# BENCH_FULL=1 "1 4 16 32 64 128 256"), BENCH_JOBS (default 4000, 20000
# with BENCH_FULL=1), BENCH_PAIRS (A/B pairs per worker count, default 2),
# AUDIT_EVENTS (base ledger size, default 125000; BENCH_FULL=1 adds a
# 10,000,000-event ledger), BENCH_DSN (use that server instead of an
# ephemeral one; nothing else may run on it), PROTOCOL.
# The default run takes about 4 minutes on a 2-core machine.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

full=${BENCH_FULL:-0}
if [ "$full" = 1 ]; then
    workers=${BENCH_WORKERS:-"1 4 16 32 64 128 256"}
    jobs=${BENCH_JOBS:-20000}
else
    workers=${BENCH_WORKERS:-"1 4 16 32 64"}
    jobs=${BENCH_JOBS:-4000}
fi
pairs=${BENCH_PAIRS:-2}
audit_base=${AUDIT_EVENTS:-125000}
protocol=${PROTOCOL:-backends/postgres/skip_locked.sql}
out=${BENCH_OUT:-results/bench}
q=${QCHAOS:-./qchaos}  # QCHAOS: another build to measure (a before/after)
tck=$(getconf CLK_TCK)

die() { echo "bench: $*" >&2; exit 2; }
[ -x "$q" ] || die "build $q first (make)"
command -v pgbench >/dev/null || die "pgbench not found (postgresql-client)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian package time)"
[ -f "$protocol" ] || die "protocol '$protocol' not found"
mkdir -p "$out" || die "cannot create $out"
work=$(mktemp -d /tmp/qchaos-bench.XXXXXX)
chmod 755 "$work"

pgdir=""
cleanup() {
    [ -n "$pgdir" ] && scripts/pg-ephemeral.sh destroy "$pgdir" >/dev/null 2>&1
    [ "${BENCH_KEEP:-0}" = 1 ] && echo "bench: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${BENCH_DSN:-}" ]; then
    dsn=$BENCH_DSN
    pm_pid=""
else
    pgdir="$work/pg"
    dsn=$(scripts/pg-ephemeral.sh start "$pgdir" 2>"$work/pg-start.log" | tail -n1)
    [ -n "$dsn" ] || { cat "$work/pg-start.log" >&2; die "cannot start PostgreSQL"; }
    pm_pid=$(head -n1 "$pgdir/data/postmaster.pid")
fi
psql_q() { psql "$dsn" -X -q -v ON_ERROR_STOP=1 -At "$@"; }

# CPU ticks of the server so far: live postgres processes (the postmaster
# and its children) plus the postmaster's waited-for children (exited
# backends).  Empty when the server is not ours (BENCH_DSN).
server_ticks() {
    [ -n "$pm_pid" ] || { echo ""; return; }
    # after "pid (comm) ": $1 state, $2 ppid, ..., $12 utime, $13 stime,
    # $14 cutime, $15 cstime (comm may hold spaces: cut at the last ")")
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v pm="$pm_pid" '
        { pid = $1; sub(/^.*\) /, ""); if (pid == pm) t += $12 + $13 + $14 + $15;
          else if ($2 == pm) t += $12 + $13 }
        END { print t + 0 }'
}

# The protocol's step NAME: the lines after "-- name: NAME" up to the next
# step, without comments and blank lines.
step_sql() {
    awk -v want="$1" '
        /^-- name: / { on = ($3 == want); next }
        on && !/^[ \t]*--/ && !/^[ \t]*$/ { print }' "$protocol"
}

claim_sql=$(step_sql claim)
complete_sql=$(step_sql complete)
setup_sql=$(step_sql setup)
[ -n "$claim_sql" ] && [ -n "$complete_sql" ] && [ -n "$setup_sql" ] ||
    die "$protocol has no setup, claim or complete step"
# pgbench: the claim's row goes into :job_id and :token (\gset), the
# statement's own final ';' gives way to it.
{
    printf '%s \\gset\n' "$(printf '%s\n' "$claim_sql" | sed '$ s/;[ \t]*$//')"
    printf '%s\n' "$complete_sql"
} >"$work/job.sql"

settings=$(psql_q -F= -c "SELECT name, setting FROM pg_settings WHERE name IN
    ('server_version','max_connections','shared_buffers','fsync','synchronous_commit',
     'full_page_writes','autovacuum','autovacuum_naptime','checkpoint_timeout','max_wal_size',
     'work_mem','wal_level') ORDER BY name") || die "cannot reach the server: $dsn"
echo "bench: server settings:"
printf '%s\n' "$settings" | sed 's/^/  /'
echo "bench: protocol $protocol, $jobs jobs a run, $pairs A/B pair(s) per worker count"

load_queue() {
    psql_q -c "DROP SCHEMA IF EXISTS qchaos CASCADE" >/dev/null 2>&1
    printf '%s\n' "$setup_sql" | psql_q >/dev/null 2>&1 || return 1
    psql_q -c "INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after)
               SELECT repeat('x', 32), NULL, 3, now() FROM generate_series(1, $1)" \
        >/dev/null || return 1
    psql_q -c "VACUUM ANALYZE qchaos.jobs" >/dev/null && psql_q -c "CHECKPOINT" >/dev/null
}

# cpu_ms FILE: user+sys ms from a /usr/bin/time -f '%U %S %M' file.
cpu_ms() { awk 'END { printf "%.0f", ($1 + $2) * 1000 }' "$1"; }
per_k() { awk -v c="$1" -v j="$2" 'BEGIN { if (c == "" || j <= 0) print "null"; else printf "%.1f", c * 1000 / j }'; }
avg() { printf '%s\n' "$@" | awk 'NF { s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "null" }'; }

results_json=""
printf '\n%8s %12s %12s %7s %14s %14s %16s %16s\n' workers pgbench_j/s qchaos_j/s ratio \
    pgb_cpu_ms/1k qc_cpu_ms/1k srv_ms/1k_pgb srv_ms/1k_qc
for w in $workers; do
    per=$((jobs / w))
    [ "$per" -ge 1 ] || { echo "bench: $w workers: fewer jobs than workers, skipped"; continue; }
    pj=() qj=() pc=() qc=() ps=() qs=()
    for ((p = 1; p <= pairs; p++)); do
        # A: pgbench
        load_queue "$jobs" || die "cannot load the queue table"
        s0=$(server_ticks)
        th=$((w < 2 ? 1 : 2))
        /usr/bin/time -f '%U %S %M' -o "$work/pgb.time" \
            pgbench "$dsn" -n -M prepared -c "$w" -j "$th" -t "$per" -f "$work/job.sql" \
            -D batch=1 -D lease_ms=5000 -D worker=pgbench >"$work/pgb.log" 2>&1 ||
            { tail -n 20 "$work/pgb.log" >&2; die "pgbench failed at $w clients"; }
        sleep 0.3
        s1=$(server_ticks)
        tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/pgb.log")
        n=$((per * w))
        pj+=("$tps")
        pc+=("$(per_k "$(cpu_ms "$work/pgb.time")" "$n")")
        [ -n "$s0" ] && ps+=("$(per_k $(((s1 - s0) * 1000 / tck)) "$n")")
        psql_q -c "DROP SCHEMA IF EXISTS qchaos CASCADE" >/dev/null 2>&1
        # B: qchaos
        psql_q -c "CHECKPOINT" >/dev/null
        s0=$(server_ticks)
        /usr/bin/time -f '%U %S %M' -o "$work/qc.time" \
            "$q" run scenarios/default.ini --protocol "$protocol" --dsn "$dsn" --workers "$w" \
            --jobs "$jobs" --seed "$p" --out "$work/run-$w" --force --no-progress \
            >"$work/qc.log" 2>&1
        rc=$?
        sleep 0.3
        s1=$(server_ticks)
        [ "$rc" -eq 0 ] || { tail -n 20 "$work/qc.log" >&2; echo "bench: qchaos run exited $rc at $w workers" >&2; }
        jps=$(sed -n 's/^qchaos: seed .* \([0-9.]*\) jobs\/s.*/\1/p' "$work/qc.log")
        qj+=("${jps:-0}")
        qc+=("$(per_k "$(cpu_ms "$work/qc.time")" "$jobs")")
        [ -n "$s0" ] && qs+=("$(per_k $(((s1 - s0) * 1000 / tck)) "$jobs")")
        [ -f "$work/run-$w/ledger.jsonl" ] && head -n1 "$work/run-$w/ledger.jsonl" >"$work/header.jsonl"
    done
    a_pj=$(avg "${pj[@]}") a_qj=$(avg "${qj[@]}")
    ratio=$(awk -v a="$a_qj" -v b="$a_pj" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "null" }')
    a_pc=$(avg "${pc[@]}") a_qc=$(avg "${qc[@]}") a_ps=$(avg "${ps[@]:-}") a_qs=$(avg "${qs[@]:-}")
    printf '%8s %12s %12s %7s %14s %14s %16s %16s\n' "$w" "$a_pj" "$a_qj" "$ratio" "$a_pc" "$a_qc" \
        "$a_ps" "$a_qs"
    printf '         runs: pgbench %s j/s, qchaos %s j/s\n' "${pj[*]}" "${qj[*]}"
    results_json+="${results_json:+,}
    {\"workers\":$w,\"jobs_per_client\":$per,\"pgbench_jobs_per_s\":$a_pj,\"qchaos_jobs_per_s\":$a_qj,\"ratio\":$ratio,\"pgbench_cpu_ms_per_1000_jobs\":$a_pc,\"qchaos_cpu_ms_per_1000_jobs\":$a_qc,\"server_cpu_ms_per_1000_jobs_under_pgbench\":$a_ps,\"server_cpu_ms_per_1000_jobs_under_qchaos\":$a_qs,\"pgbench_runs\":[$(IFS=,; echo "${pj[*]}")],\"qchaos_runs\":[$(IFS=,; echo "${qj[*]}")]}"
done
psql_q -c "DROP SCHEMA IF EXISTS qchaos CASCADE" >/dev/null 2>&1

# ---- part 2: the audit -----------------------------------------------------
[ -s "$work/header.jsonl" ] || die "no qchaos ledger header to build the audit ledgers from"
# gen_ledger EVENTS FILE: a header and EVENTS events of a clean run (7 a job).
gen_ledger() {
    local njobs=$(($1 / 7))
    sed "s/\"jobs\":[0-9]*/\"jobs\":$njobs/" "$work/header.jsonl" >"$2"
    awk -v njobs="$njobs" -v W=16 '
    BEGIN {
        seq = 0; t = 1000.0; now = 1796156990000.0
        for (j = 1; j <= njobs; j++)
            printf "{\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":%d,\"seq\":%d,\"t\":%.3f}\n", j, ++seq, t += 0.01
        for (j = 1; j <= njobs; j++) {
            w = j % W; req = 2 * int(j / W)
            tok = sprintf("%08x-%04x-4%03x-8%03x-%012x", j, w, j % 4096, (j * 7) % 4096, j * 13)
            printf "{\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,\"inc\":0,\"req\":%d,\"seq\":%d,\"t\":%.3f}\n", w, req, ++seq, t
            t += 0.2; now += 0.2
            printf "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,\"inc\":0,\"req\":%d,\"rows\":1,\"job\":%d,\"token\":\"%s\",\"lease_until\":%.3f,\"now\":%.3f,\"attempt\":1,\"op_key\":\"%d\",\"seq\":%d,\"t\":%.3f}\n", w, req, j, tok, now + 5000, now, j, ++seq, t
            t += 0.01
            printf "{\"type\":\"effect\",\"worker\":%d,\"inc\":0,\"job\":%d,\"token\":\"%s\",\"op_key\":\"%d\",\"applied\":true,\"work_ms\":0.0,\"seq\":%d,\"t\":%.3f}\n", w, j, tok, j, ++seq, t
            t += 0.01
            printf "{\"type\":\"invoke\",\"op\":\"complete\",\"worker\":%d,\"inc\":0,\"req\":%d,\"job\":%d,\"token\":\"%s\",\"seq\":%d,\"t\":%.3f}\n", w, req + 1, j, tok, ++seq, t
            t += 0.2; now += 0.2
            printf "{\"type\":\"ok\",\"op\":\"complete\",\"worker\":%d,\"inc\":0,\"req\":%d,\"job\":%d,\"token\":\"%s\",\"rows\":1,\"now\":%.3f,\"counted\":true,\"seq\":%d,\"t\":%.3f}\n", w, req + 1, j, tok, now, ++seq, t
        }
        for (j = 1; j <= njobs; j++)
            printf "{\"type\":\"snapshot\",\"job\":%d,\"state\":\"done\",\"attempt\":1,\"seq\":%d,\"t\":%.3f}\n", j, ++seq, t
        printf "{\"type\":\"end\",\"drained\":true,\"seq\":%d,\"t\":%.3f}\n", ++seq, t
    }' >>"$2"
}

sizes="$audit_base $((audit_base * 2)) $((audit_base * 4)) $((audit_base * 8))"
[ "$full" = 1 ] && sizes+=" 10000000"
audit_json=""
printf '\n%10s %10s %9s %12s %16s %10s %12s %6s\n' events MB_on_disk wall_s events/s events/s/core peak_MB bytes/event load1
for n in $sizes; do
    gen_ledger "$n" "$work/audit.jsonl"
    ev=$(($(wc -l <"$work/audit.jsonl") - 1))
    disk=$(stat -c %s "$work/audit.jsonl")
    read -r load1 _ </proc/loadavg  # the 1-minute load average as the audit starts
    t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S %M' -o "$work/audit.time" "$q" audit "$work/audit.jsonl" \
        >"$work/audit.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    read -r u s m < <(tail -n1 "$work/audit.time")
    line=$(awk -v n="$ev" -v d="$disk" -v t0="$t0" -v t1="$t1" -v u="$u" -v s="$s" -v m="$m" 'BEGIN {
        w = t1 - t0; c = u + s; if (c <= 0) c = 0.01
        printf "%d %.1f %.2f %.0f %.0f %.1f %.0f", n, d / 1048576, w, n / w, n / c, m / 1024, m * 1024 / n }')
    # shellcheck disable=SC2086
    set -- $line
    printf '%10s %10s %9s %12s %16s %10s %12s %6s   (exit %s: %s)\n' "$@" "$load1" "$rc" \
        "$(sed -n 's/^qchaos: verdict: \([A-Z]*\).*/\1/p' "$work/audit.log")"
    audit_json+="${audit_json:+,}
    {\"events\":$1,\"bytes_on_disk_per_event\":$(awk -v d="$disk" -v n="$1" 'BEGIN{printf "%.1f", d/n}'),\"wall_s\":$3,\"events_per_s\":$4,\"events_per_cpu_s\":$5,\"peak_rss_mb\":$6,\"peak_bytes_per_event\":$7,\"load1\":$load1,\"exit\":$rc}"
    [ "${BENCH_KEEP:-0}" = 1 ] && mv "$work/audit.jsonl" "$work/audit-$n.jsonl"; rm -f "$work/audit.jsonl"
done

settings_json=$(printf '%s\n' "$settings" | awk -F= '{ printf "%s\"%s\":\"%s\"", (NR > 1 ? "," : ""), $1, $2 }')
cat >"$out/bench.json" <<EOF
{
  "schema": "qchaos-bench/1",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "qchaos": "$($q version 2>/dev/null | head -n1)",
  "protocol": "$protocol",
  "jobs": $jobs,
  "pairs": $pairs,
  "cpus": $(nproc),
  "server_settings": {$settings_json},
  "client": [$results_json
  ],
  "audit": [$audit_json
  ]
}
EOF
echo
echo "bench: written $out/bench.json"
