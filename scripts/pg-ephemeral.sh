#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a folder, for tests and chaos runs.
#
#   scripts/pg-ephemeral.sh start   DIR               create (if needed) and start
#   scripts/pg-ephemeral.sh stop    DIR [--immediate] stop (-m fast; -m immediate = crash)
#   scripts/pg-ephemeral.sh restart DIR [--immediate] stop, start again on the same port
#   scripts/pg-ephemeral.sh pause   DIR MS            freeze the server (SIGSTOP) for MS ms
#   scripts/pg-ephemeral.sh status  DIR               exit 0 running, 3 stopped, 4 no cluster
#   scripts/pg-ephemeral.sh dsn     DIR               print the libpq conninfo
#   scripts/pg-ephemeral.sh destroy DIR               stop (immediate) and remove DIR
#
# start prints the conninfo "host=127.0.0.1 port=PORT user=postgres
# dbname=postgres sslmode=disable gssencmode=disable" as the LAST line of
# stdout (everything else goes to stderr), so:
#   DSN=$(scripts/pg-ephemeral.sh start DIR | tail -n1)
# Every setting is explicit, so a PGSSLMODE / PGGSSENCMODE in the user's
# environment cannot steer a client of this server (it has no TLS).  The
# script's own probes ignore the PG* environment (ephemeral-lib.sh).
# It is also written to DIR/dsn.  start on a running cluster just prints it.
#
# Layout: DIR/data (PGDATA), DIR/sock (private unix socket folder), DIR/log
# (server log), DIR/port, DIR/dsn.  Trust authentication, fsync=off and
# friends: never keep data you care about in it.  As root, initdb and
# postgres run as the `postgres` user (they refuse to run as root).
# Environment: PG_BINDIR overrides where initdb/pg_ctl/postgres are found;
# PG_EPHEMERAL_TIMEOUT (seconds, default 60) bounds every wait;
# PG_EPHEMERAL_SYNC_COMMIT=on|off|... overrides synchronous_commit (default
# on) for this start.  It stays on so that acknowledged commits survive a
# `restart --immediate` (a server crash): with off, the last ~0.6 s of
# acknowledged commits are lost by design and acked_durable would blame the
# queue for the cluster's settings.  fsync=off loses nothing on a server
# crash, only on an OS crash, and keeps commits cheap.
set -euo pipefail

# Everything goes to stderr; fd 3 is the real stdout, for the conninfo only.
# Children that outlive us (the postmaster) must not inherit fd 3 or the lock
# fd 9, or `$(... start DIR)` would never see EOF and stop would block on the
# lock: as_owner closes both.
exec 3>&1 1>&2

prog=pg-ephemeral
usage_lines=26
# shellcheck source=scripts/ephemeral-lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/ephemeral-lib.sh"
parse_args "$@"
timeout=${PG_EPHEMERAL_TIMEOUT:-60}
sync_commit=${PG_EPHEMERAL_SYNC_COMMIT:-}
[[ "$sync_commit" =~ ^[a-z_]*$ ]] || die "bad PG_EPHEMERAL_SYNC_COMMIT=$sync_commit"


# --- binaries --------------------------------------------------------------
find_bindir() {
    local d
    if [[ -n "${PG_BINDIR:-}" ]]; then
        [[ -x "$PG_BINDIR/initdb" ]] || die "PG_BINDIR=$PG_BINDIR has no initdb"
        echo "$PG_BINDIR"
        return
    fi
    if command -v pg_config >/dev/null 2>&1; then
        d=$(pg_config --bindir 2>/dev/null || true)
        if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
            echo "$d"
            return
        fi
    fi
    # Newest /usr/lib/postgresql/N/bin (numeric sort on N).
    d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null |
        sort -t/ -k5,5n | tail -n1)
    [[ -n "$d" && -x "$d/initdb" ]] ||
        die "no PostgreSQL server binaries (initdb) found; run scripts/install-deps.sh"
    echo "$d"
}
BIN=$(find_bindir)
PSQL=$BIN/psql
[[ -x "$PSQL" ]] || PSQL=$(command -v psql) || die "psql not found"

# --- folder and user -------------------------------------------------------
case "$cmd" in
start | restart) mkdir -p -- "$dir_arg" || die "cannot create folder $dir_arg" ;;
esac
if [[ -d "$dir_arg" ]]; then
    DIR=$(cd -- "$dir_arg" && pwd -P)
else
    DIR=$(realpath -m -- "$dir_arg")
fi
cd / # the server user may not be allowed into the caller's cwd
DATA=$DIR/data
SOCK=$DIR/sock
LOGF=$DIR/log
MARK=$DIR/.pg-ephemeral

if ((EUID == 0)); then
    id postgres >/dev/null 2>&1 ||
        die "running as root but there is no 'postgres' user (install postgresql-15)"
    RUNAS=(runuser -u postgres --)
    OWNER=postgres
else
    RUNAS=()
    OWNER=$(id -un)
fi
as_owner() { "${RUNAS[@]}" "$@" 3>&- 9>&-; }



# --- cluster ---------------------------------------------------------------
conninfo() { echo "host=127.0.0.1 port=$1 user=postgres dbname=postgres sslmode=disable gssencmode=disable"; }

# A postmaster killed from outside stays a zombie until PID 1 reaps it (1-2 s
# in containers whose init reaps lazily); pg_ctl and postgres see it as alive.
old_postmaster_zombie() {
    local pid st
    pid=$(head -n1 "$DATA/postmaster.pid" 2>/dev/null) || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    st=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [[ "${st%% *}" == Z ]]
}

is_running() {
    [[ -f "$DATA/PG_VERSION" ]] || return 1
    ! old_postmaster_zombie || return 1
    as_owner "$BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1
}



init_cluster() {
    # sun_path is 108 bytes: DIR/sock/.s.PGSQL.NNNNN must fit.
    ((${#SOCK} + 17 < 108)) || die "DIR path too long for a unix socket ($SOCK); use a shorter DIR"
    log "initdb in $DATA ($BIN)"
    touch "$MARK"
    as_owner rm -rf "$DATA" # leftovers of a failed initdb
    as_owner mkdir -p "$SOCK"
    as_owner chmod 0700 "$SOCK"
    as_owner "$BIN/initdb" -D "$DATA" --auth=trust --no-sync -U postgres -E UTF8 \
        --no-locale --no-instructions >"$DIR/initdb.log" 2>&1 ||
        { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    as_owner tee -a "$DATA/postgresql.conf" >/dev/null <<CONF

# --- throwaway cluster (qchaos scripts/pg-ephemeral.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
unix_socket_permissions = 0700
max_connections = 300
fsync = off
synchronous_commit = on
full_page_writes = off
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
autovacuum_naptime = 1s
log_line_prefix = '%m [%p] %q%u@%d '
CONF
}

# start_cluster PORT: 0 when ready, 2 when the port could not be bound, 3
# when leftovers of a killed server are in the way (retry), else 1.
start_cluster() {
    local port=$1 t0 off=0 deadline opts
    t0=$(now_ms)
    deadline=$((SECONDS + timeout))
    while old_postmaster_zombie; do
        ((SECONDS < deadline)) || die "old postmaster is still a zombie after ${timeout}s"
        sleep 0.1
    done
    opts="-p $port"
    [[ -z "$sync_commit" ]] || opts+=" -c synchronous_commit=$sync_commit"
    [[ -f "$LOGF" ]] && off=$(stat -c %s "$LOGF")
    log "starting on 127.0.0.1:$port (log: $LOGF)${sync_commit:+ synchronous_commit=$sync_commit}"
    if ! as_owner "$BIN/pg_ctl" start -D "$DATA" -l "$LOGF" -w -t "$timeout" \
        -o "$opts" >/dev/null </dev/null; then
        tail -c +$((off + 1)) "$LOGF" 2>/dev/null | tail -n 20 >&2
        if tail -c +$((off + 1)) "$LOGF" 2>/dev/null |
            grep -q "could not bind\|Address already in use"; then
            return 2
        fi
        if tail -c +$((off + 1)) "$LOGF" 2>/dev/null |
            grep -q 'lock file "postmaster.pid" already exists\|pre-existing shared memory block'; then
            return 3
        fi
        return 1
    fi
    deadline=$((SECONDS + timeout))
    until "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; do
        ((SECONDS < deadline)) || { tail -n 20 "$LOGF" >&2; die "server not ready after ${timeout}s"; }
        sleep 0.1
    done
    echo "$port" >"$DIR/port"
    conninfo "$port" >"$DIR/dsn"
    log "ready in $(elapsed "$t0")"
}

# do_start [PORT]: with PORT, start on exactly that port (restart).
do_start() {
    local want=${1:-} fresh=0 port="" tries rc dsn t0
    t0=$(now_ms)
    if [[ ! -f "$DATA/PG_VERSION" && ! -f "$MARK" ]] && ! dir_is_empty; then
        die "$DIR is not empty and holds no pg-ephemeral cluster; refusing to initdb there"
    fi
    prepare_dir
    lock
    if is_running; then
        port=$(cat "$DIR/port")
        log "already running on port $port"
        conninfo "$port" >"$DIR/dsn"
        conninfo "$port" >&3
        return 0
    fi
    if [[ ! -f "$DATA/PG_VERSION" ]]; then
        init_cluster
        fresh=1
    fi
    if [[ -n "$want" ]]; then
        port=$want
    elif [[ -f "$DIR/port" ]] && ! port_in_use "$(cat "$DIR/port")"; then
        port=$(cat "$DIR/port") # keep the DSN stable across stop/start when possible
    fi
    for ((tries = 1; ; tries++)); do
        [[ -n "$port" ]] || port=$(free_port)
        rc=0
        start_cluster "$port" || rc=$?
        ((rc != 0)) || break
        if ((rc == 2)) && [[ -z "$want" ]] && ((tries < 5)); then
            log "port $port was taken meanwhile, retrying with another one"
            port=""
            continue
        fi
        if ((rc == 3)) && ((tries < 20)); then
            log "processes of a killed server are still around, retrying in 0.5s"
            sleep 0.5
            continue
        fi
        die "pg_ctl start failed on port $port (see $LOGF)"
    done
    dsn=$(conninfo "$port")
    if ((fresh)) || [[ -z "$("$PSQL" -X -Atq "$dsn" \
        -c "SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'" 2>/dev/null)" ]]; then
        "$PSQL" -X -q -v ON_ERROR_STOP=1 "$dsn" -c "SET client_min_messages = warning" \
            -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" ||
            die "CREATE EXTENSION pg_stat_statements failed"
        "$PSQL" -X -q -v ON_ERROR_STOP=1 "$dsn" -c "SET client_min_messages = warning" \
            -c "CREATE EXTENSION IF NOT EXISTS pgcrypto" ||
            log "warning: CREATE EXTENSION pgcrypto failed (gen_random_uuid() is built in anyway)"
    fi
    log "start took $(elapsed "$t0") in all"
    echo "$dsn" >&3
}

# resume_all: SIGCONT the postmaster and its children, in case a pause was
# cut short (a pause killed with -9 leaves the server stopped, and a stopped
# server never acts on pg_ctl stop).  Harmless on a running server.
resume_all() {
    local pm
    pm=$(head -n1 "$DATA/postmaster.pid" 2>/dev/null || true)
    [[ "$pm" =~ ^[0-9]+$ ]] || return 0
    # shellcheck disable=SC2046 # one word per pid
    kill -CONT "$pm" $(pgrep -P "$pm") 2>/dev/null || true
}

do_stop() {
    local mode=fast t0
    t0=$(now_ms)
    [[ -f "$DATA/PG_VERSION" ]] || { log "no cluster in $DIR"; return 0; }
    lock
    resume_all
    if ! is_running; then
        log "not running"
        return 0
    fi
    if ((immediate)); then mode=immediate; fi
    as_owner "$BIN/pg_ctl" stop -D "$DATA" -m "$mode" -w -t "$timeout" >/dev/null ||
        die "pg_ctl stop -m $mode failed"
    log "stopped (-m $mode) in $(elapsed "$t0")"
}

do_restart() {
    local port
    [[ -f "$DATA/PG_VERSION" && -f "$DIR/port" ]] || die "no cluster in $DIR to restart"
    port=$(cat "$DIR/port")
    do_stop
    exec 9>&-
    do_start "$port"
}


# do_pause: SIGSTOP the postmaster and every backend, wait, SIGCONT them (the
# server's clock keeps running, its sessions keep their sockets: a frozen VM
# or a long GC pause of the database).  CONT is sent even if this script is
# interrupted.
do_pause() {
    local pm pids
    [[ -n "$pause_ms" ]] || die "pause needs a duration in ms"
    [[ -f "$DATA/postmaster.pid" ]] || die "not running"
    pm=$(head -n1 "$DATA/postmaster.pid")
    if ! [[ "$pm" =~ ^[0-9]+$ ]] || ! kill -0 "$pm" 2>/dev/null; then die "not running"; fi
    pids="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
    # shellcheck disable=SC2086 # word splitting of the pid list is wanted
    trap 'kill -CONT $pids 2>/dev/null' EXIT
    # shellcheck disable=SC2086
    kill -STOP $pids
    log "paused (SIGSTOP) $(wc -w <<<"$pids") processes for $pause_ms ms"
    sleep_ms "$pause_ms"
    # shellcheck disable=SC2086
    kill -CONT $pids
    trap - EXIT
    log "resumed (SIGCONT)"
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
restart) do_restart ;;
pause) do_pause ;;
status)
    [[ -f "$DATA/PG_VERSION" ]] || { log "no cluster in $DIR"; exit 4; }
    if is_running; then
        log "running: $(cat "$DIR/dsn" 2>/dev/null) (data $DATA)"
        exit 0
    fi
    log "stopped (data $DATA)"
    exit 3
    ;;
dsn)
    [[ -f "$DIR/dsn" ]] || die "no dsn in $DIR (never started?)"
    cat "$DIR/dsn" >&3
    ;;
destroy)
    [[ -e "$DIR" ]] || { log "$DIR does not exist"; exit 0; }
    if [[ -f "$DATA/PG_VERSION" ]]; then
        immediate=1
        # A harness killed during initdb leaves a bootstrap backend's negative
        # pid in postmaster.pid, and pg_ctl then refuses to stop "a
        # single-user server": go on and kill what is left.
        (do_stop) || log "stop failed; killing what is left of the server"
    fi
    # initdb, its bootstrap backend, or a postmaster pg_ctl could not stop:
    # every process with this cluster's data folder on its command line.
    if pgrep -f -- "$DATA" >/dev/null; then
        pkill -CONT -f -- "$DATA" || true
        pkill -KILL -f -- "$DATA" || true
        log "killed the processes left on $DATA"
    fi
    if [[ -f "$MARK" ]] || dir_is_empty; then
        rm -rf -- "$DIR"
        log "removed $DIR"
    else
        die "$DIR does not look like a pg-ephemeral folder; not removing it"
    fi
    ;;
*) usage; die "unknown command: $cmd" ;;
esac
