#!/usr/bin/env bash
# Regression checks of the ephemeral server scripts (tests/run.sh runs it;
# ~20 s):
#  1. proc_live (ephemeral-lib.sh) says "alive" for a child that has not
#     exec'd yet, under a CPU hog: 30 tries of `setsid sleep 2 &` (reading
#     /proc/PID/comm instead showed the shell's name in 19 of 50 and made
#     mariadb-ephemeral.sh start wait for ever on a live server);
#  2. mariadb-ephemeral.sh start / destroy under the CPU hog, bounded;
#  3. the scripts ignore the user's PG* / MYSQL* environment: with
#     PGSSLMODE=require, PGHOST, PGPORT, PGUSER, PGDATABASE, PGSERVICE,
#     PGPASSFILE, MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_PWD exported, start
#     succeeds and the printed DSN connects even with PGSSLMODE=require
#     still in psql's environment; and `qchaos run` with PGSSLMODE=require
#     (the zero-argument path: its own throwaway server) passes.
# Prints "ephemeral.sh: ok" or the first failure; exit 0 / 1.
set -uo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/qchaos-ephemeral-test.XXXXXX)
chmod 755 "$work"
hog_pids=()
cleanup() {
    local p
    for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
    scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1
    scripts/mariadb-ephemeral.sh destroy "$work/mdb" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "ephemeral.sh: FAIL: $*" >&2; exit 1; }
elapsed_s() { echo "$SECONDS"; }

# --- 1. proc_live on a child that may not have exec'd -----------------------
prog=ephemeral-test
usage_lines=1
# shellcheck source=scripts/ephemeral-lib.sh
. scripts/ephemeral-lib.sh
for ((i = 0; i < $(nproc); i++)); do
    (trap - EXIT; while :; do :; done) &
    hog_pids+=($!)
done
early_comm=0
for ((i = 0; i < 30; i++)); do
    setsid sleep 2 &
    pid=$!
    proc_live "$pid" || fail "try $i: proc_live says a just-started child ($pid) is gone"
    proc_is "$pid" sleep || early_comm=$((early_comm + 1))
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ! proc_live "$pid" || fail "try $i: proc_live says a reaped child ($pid) lives"
done
# deterministic: a child that execs only after 1 s shows the shell's comm
# meanwhile; proc_live must call it alive (the old comm test did not)
(trap - EXIT; sleep 1; exec sleep 3) &
pid=$!
proc_live "$pid" || fail "proc_live says a child that has not exec'd yet is gone"
! proc_is "$pid" sleep || fail "a child that has not exec'd yet already shows comm 'sleep'"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
printf "%s\n" "ephemeral.sh: proc_live right in 30 of 30 tries under the hog (the comm was not yet 'sleep' in $early_comm) and for a child exec'ing late ($(elapsed_s) s)"

# --- 2 and 3: the scripts with a hostile environment (MariaDB under the hog)
export PGSSLMODE=require PGHOST=/nonexistent PGPORT=1 PGUSER=nobody PGDATABASE=nowhere
export PGSERVICE=no_such_service PGPASSFILE=/nonexistent/pgpass PGCONNECT_TIMEOUT=1
export MYSQL_HOST=192.0.2.1 MYSQL_TCP_PORT=1 MYSQL_PWD=wrong
t0=$SECONDS
odbc=$(timeout 120 scripts/mariadb-ephemeral.sh start "$work/mdb" 2>"$work/mdb.err" | tail -n1) ||
    { cat "$work/mdb.err" >&2; fail "mariadb-ephemeral.sh start under a CPU hog with MYSQL* exported"; }
[[ "$odbc" == Driver=* ]] || fail "mariadb-ephemeral.sh printed no connection string"
scripts/mariadb-ephemeral.sh status "$work/mdb" 2>/dev/null || fail "mariadb-ephemeral.sh status after start"
scripts/mariadb-ephemeral.sh destroy "$work/mdb" 2>/dev/null || fail "mariadb-ephemeral.sh destroy"
echo "ephemeral.sh: MariaDB start + destroy under the hog in $((SECONDS - t0)) s"

for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
hog_pids=()
dsn=$(timeout 120 scripts/pg-ephemeral.sh start "$work/pg" 2>"$work/pg.err" | tail -n1) ||
    { cat "$work/pg.err" >&2; fail "pg-ephemeral.sh start with PG* exported"; }
[[ "$dsn" == *"sslmode=disable"* && "$dsn" == *host=* && "$dsn" == *port=* &&
    "$dsn" == *user=* && "$dsn" == *dbname=* ]] || fail "the conninfo is not explicit: $dsn"
# (PGSERVICE naming no service breaks any libpq client whatever the
# conninfo says: that is the user's own setting, not the script's probes)
[[ "$(env -u PGSERVICE psql -X -Atq "$dsn" -c 'SELECT 42' 2>&1)" == 42 ]] ||
    fail "the printed conninfo does not connect with PG* exported: $dsn"
scripts/pg-ephemeral.sh destroy "$work/pg" 2>/dev/null || fail "pg-ephemeral.sh destroy"
echo "ephemeral.sh: pg-ephemeral.sh ignored the PG* environment; its conninfo connects ($(elapsed_s) s)"

unset PGHOST PGPORT PGUSER PGDATABASE PGSERVICE PGPASSFILE PGCONNECT_TIMEOUT
[[ -x ./qchaos ]] || fail "./qchaos not built"
./qchaos run scenarios/default.ini --jobs 200 --workers 4 --seed 1 --no-progress \
    --out "$work/run" >"$work/run.log" 2>&1
rc=$?
((rc == 0)) || { tail -n 20 "$work/run.log" >&2; fail "qchaos run with PGSSLMODE=require exited $rc"; }
echo "ephemeral.sh: qchaos run with PGSSLMODE=require exported: exit 0 ($(elapsed_s) s)"
echo "ephemeral.sh: ok"
