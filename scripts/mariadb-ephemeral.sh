#!/usr/bin/env bash
# A throwaway MariaDB server in a folder, for tests and chaos runs.
#
#   scripts/mariadb-ephemeral.sh start   DIR               create (if needed) and start
#   scripts/mariadb-ephemeral.sh stop    DIR [--immediate] clean SHUTDOWN; --immediate = SIGKILL
#   scripts/mariadb-ephemeral.sh restart DIR [--immediate] stop, start again on the same port
#   scripts/mariadb-ephemeral.sh pause   DIR MS            freeze the server (SIGSTOP) for MS ms
#   scripts/mariadb-ephemeral.sh status  DIR               exit 0 running, 3 stopped, 4 no server
#   scripts/mariadb-ephemeral.sh dsn     DIR               print the ODBC connection string
#   scripts/mariadb-ephemeral.sh destroy DIR               kill and remove DIR
#
# start prints the ODBC connection string
#   Driver={MariaDB Unicode};Server=127.0.0.1;Port=PORT;Database=qchaos;Uid=qchaos;Pwd=qchaos;
# as the LAST line of stdout (everything else goes to stderr), so
#   DSN=$(scripts/mariadb-ephemeral.sh start DIR | tail -n1)
# It is also written to DIR/dsn.  start on a running server just prints it.
# User qchaos (password qchaos; all privileges, it is a throwaway server)
# and database qchaos are created at start; the admin connects as root (as
# the invoking user when not root) over the private socket DIR/sock/mariadbd.sock.
#
# Layout: DIR/data, DIR/sock, DIR/tmp, DIR/log (error log), DIR/pid,
# DIR/port, DIR/dsn.  As root the server runs as the `mysql` user.
# Environment: MARIADB_EPHEMERAL_TIMEOUT (seconds, default 30) bounds the
# wait for readiness; MARIADB_EPHEMERAL_FLUSH_LOG overrides
# innodb_flush_log_at_trx_commit (default 2: acknowledged commits survive a
# server crash, stop --immediate; 0 would lose up to ~1 s of them and make
# acked_durable blame the queue for the server's settings).
set -euo pipefail

# Everything goes to stderr; fd 3 is the real stdout, for the DSN only.  The
# server (which outlives us) must not inherit fd 3 or the lock fd 9, or
# `$(... start DIR)` would never see EOF and stop would block on the lock.
exec 3>&1 1>&2

prog=mariadb-ephemeral
usage_lines=28
# shellcheck source=scripts/ephemeral-lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/ephemeral-lib.sh"
parse_args "$@"
timeout=${MARIADB_EPHEMERAL_TIMEOUT:-30}
flush_log=${MARIADB_EPHEMERAL_FLUSH_LOG:-2}
[[ "$flush_log" =~ ^[0-3]$ ]] || die "bad MARIADB_EPHEMERAL_FLUSH_LOG=$flush_log (0-3)"


# --- binaries --------------------------------------------------------------
need() {
    local c
    for c in "$@"; do
        if command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
    done
    die "none of [$*] found; run scripts/install-deps.sh (mariadb-server)"
}
PATH=$PATH:/usr/sbin:/usr/local/sbin
MARIADBD=$(need mariadbd mysqld)
INSTALL_DB=$(need mariadb-install-db mysql_install_db)
ADMIN_BIN=$(need mariadb-admin mysqladmin)
CLIENT=$(need mariadb mysql)

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
SOCKDIR=$DIR/sock
SOCK=$SOCKDIR/mariadbd.sock
TMPD=$DIR/tmp
LOGF=$DIR/log
PIDF=$DIR/pid
MARK=$DIR/.mariadb-ephemeral

if ((EUID == 0)); then
    id mysql >/dev/null 2>&1 ||
        die "running as root but there is no 'mysql' user (install mariadb-server)"
    OWNER=mysql
    ADMIN=root
    USER_OPT=(--user=mysql)
else
    OWNER=$(id -un)
    ADMIN=$OWNER
    USER_OPT=()
fi
admin() { "$ADMIN_BIN" --no-defaults --socket="$SOCK" -u "$ADMIN" --connect-timeout=2 "$@" 3>&- 9>&-; }
sql() { "$CLIENT" --no-defaults --socket="$SOCK" -u "$ADMIN" --batch --skip-column-names 3>&- 9>&-; }





# --- server ----------------------------------------------------------------
odbc_dsn() {
    echo "Driver={MariaDB Unicode};Server=127.0.0.1;Port=$1;Database=qchaos;Uid=qchaos;Pwd=qchaos;"
}

# alive PID: a live (not zombie) mariadbd process (ephemeral-lib.sh).  Only
# for a pid that has long exec'd (the pid file of a ready server): a child
# just started still shows the shell's comm, see start_server.
alive() { proc_is "$1" mariadbd mysqld; }
server_pid() { cat "$PIDF" 2>/dev/null || true; }
is_running() { alive "$(server_pid)"; }

init_server() {
    # sun_path is 108 bytes
    ((${#SOCK} < 107)) || die "DIR path too long for a unix socket ($SOCK); use a shorter DIR"
    local t0
    t0=$(now_ms)
    log "mariadb-install-db in $DATA"
    touch "$MARK"
    rm -rf -- "$DATA" # leftovers of a failed install
    mkdir -p -- "$SOCKDIR" "$TMPD"
    chmod 0700 "$SOCKDIR" "$TMPD"
    ((EUID != 0)) || chown "$OWNER": "$SOCKDIR" "$TMPD"
    local extra=()
    ((EUID == 0)) || extra=(--auth-root-socket-user="$OWNER")
    "$INSTALL_DB" --no-defaults "${USER_OPT[@]}" "${extra[@]}" --datadir="$DATA" \
        --skip-test-db --skip-name-resolve --tmpdir="$TMPD" \
        >"$DIR/install-db.log" 2>&1 3>&- 9>&- </dev/null ||
        { tail -n 30 "$DIR/install-db.log" >&2; die "mariadb-install-db failed (see $DIR/install-db.log)"; }
    log "mariadb-install-db took $(elapsed "$t0")"
}

# start_server PORT: 0 when ready, 2 when the port could not be bound, else 1.
start_server() {
    local port=$1 t0 off=0 pid deadline
    t0=$(now_ms)
    [[ -f "$LOGF" ]] && off=$(stat -c %s "$LOGF")
    log "starting on 127.0.0.1:$port (log: $LOGF, innodb_flush_log_at_trx_commit=$flush_log)"
    local launcher=()
    command -v setsid >/dev/null 2>&1 && launcher=(setsid)
    "${launcher[@]}" "$MARIADBD" --no-defaults "${USER_OPT[@]}" \
        --datadir="$DATA" --socket="$SOCK" --port="$port" --bind-address=127.0.0.1 \
        --pid-file="$DIR/mariadbd.pid" --tmpdir="$TMPD" \
        --skip-name-resolve --max-connections=300 \
        --innodb-flush-log-at-trx-commit="$flush_log" --innodb-doublewrite=0 \
        </dev/null >>"$LOGF" 2>&1 3>&- 9>&- &
    pid=$!
    echo "$pid" >"$PIDF"
    # (no --log-error: a foreground mariadbd logs to stderr, i.e. DIR/log)
    deadline=$((SECONDS + timeout))
    # $! is our child: until it has exec'd, /proc/$pid/comm is still the
    # shell's, so "has it died?" is proc_live (exists, not a zombie), never
    # the program name -- or `wait` below would wait for a live server.
    until admin ping >/dev/null 2>&1; do
        if ! proc_live "$pid"; then
            wait "$pid" 2>/dev/null || true
            tail -c +$((off + 1)) "$LOGF" 2>/dev/null | tail -n 20 >&2
            rm -f "$PIDF"
            if tail -c +$((off + 1)) "$LOGF" 2>/dev/null | grep -q "Address already in use"; then
                return 2
            fi
            return 1
        fi
        if ((SECONDS >= deadline)); then
            tail -n 20 "$LOGF" >&2
            kill -KILL "$pid" 2>/dev/null || true
            rm -f "$PIDF"
            die "server not ready after ${timeout}s (killed it)"
        fi
        sleep 0.1
    done
    # Answering on our private socket, it has exec'd: confirm it is the
    # server (setsid execs in place; were it to fork, the server's own pid
    # file names the real one).
    if ! alive "$pid"; then
        local own
        own=$(cat "$DIR/mariadbd.pid" 2>/dev/null || true)
        alive "$own" || die "the server answers but neither pid $pid nor its pid file ($own) is mariadbd"
        pid=$own
        echo "$pid" >"$PIDF"
    fi
    echo "$port" >"$DIR/port"
    odbc_dsn "$port" >"$DIR/dsn"
    log "ready in $(elapsed "$t0") (pid $pid)"
}

bootstrap_sql() {
    sql <<'SQL'
DROP USER IF EXISTS ''@'localhost';
CREATE DATABASE IF NOT EXISTS qchaos;
CREATE USER IF NOT EXISTS 'qchaos'@'localhost' IDENTIFIED BY 'qchaos';
CREATE USER IF NOT EXISTS 'qchaos'@'127.0.0.1' IDENTIFIED BY 'qchaos';
GRANT ALL PRIVILEGES ON *.* TO 'qchaos'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'qchaos'@'127.0.0.1';
SQL
}

# do_start [PORT]: with PORT, start on exactly that port (restart).
do_start() {
    local want=${1:-} port="" tries rc t0
    t0=$(now_ms)
    if [[ ! -d "$DATA/mysql" && ! -f "$MARK" ]] && ! dir_is_empty; then
        die "$DIR is not empty and holds no mariadb-ephemeral server; refusing to install there"
    fi
    prepare_dir
    lock
    if is_running; then
        port=$(cat "$DIR/port")
        log "already running on port $port (pid $(server_pid))"
        odbc_dsn "$port" >"$DIR/dsn"
        odbc_dsn "$port" >&3
        return 0
    fi
    [[ -d "$DATA/mysql" ]] || init_server
    if [[ -n "$want" ]]; then
        port=$want
    elif [[ -f "$DIR/port" ]] && ! port_in_use "$(cat "$DIR/port")"; then
        port=$(cat "$DIR/port") # keep the DSN stable across stop/start when possible
    fi
    for ((tries = 1; ; tries++)); do
        [[ -n "$port" ]] || port=$(free_port)
        rc=0
        start_server "$port" || rc=$?
        ((rc != 0)) || break
        if ((rc == 2)) && [[ -z "$want" ]] && ((tries < 5)); then
            log "port $port was taken meanwhile, retrying with another one"
            port=""
            continue
        fi
        die "mariadbd failed to start on port $port (see $LOGF)"
    done
    bootstrap_sql || die "creating user/database qchaos failed"
    log "start took $(elapsed "$t0") in all"
    odbc_dsn "$port" >&3
}

wait_gone() {
    local pid=$1 deadline=$((SECONDS + $2))
    while alive "$pid"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

do_stop() {
    local pid t0
    t0=$(now_ms)
    [[ -d "$DATA/mysql" ]] || { log "no server in $DIR"; return 0; }
    lock
    pid=$(server_pid)
    # in case a pause was cut short: a stopped server never shuts down
    if [[ "$pid" =~ ^[0-9]+$ ]]; then kill -CONT "$pid" 2>/dev/null || true; fi
    if ! alive "$pid"; then
        log "not running"
        rm -f "$PIDF"
        return 0
    fi
    if ((immediate)); then
        kill -KILL "$pid"
        wait_gone "$pid" 10 || die "pid $pid survived SIGKILL"
        log "killed (SIGKILL) pid $pid in $(elapsed "$t0")"
    else
        # The SHUTDOWN statement is what `mariadb-admin shutdown` does, minus
        # mariadb-admin's 1 s polling for the pid file: we poll the pid ourselves.
        if ! sql <<<"SHUTDOWN" >/dev/null 2>&1 && ! admin shutdown >/dev/null 2>&1; then
            log "SHUTDOWN failed, sending SIGTERM"
            kill -TERM "$pid" 2>/dev/null || true
        fi
        if ! wait_gone "$pid" 60; then
            log "still running after 60s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            wait_gone "$pid" 10 || die "pid $pid survived SIGKILL"
        fi
        log "stopped pid $pid in $(elapsed "$t0")"
    fi
    rm -f "$PIDF"
}

do_restart() {
    local port
    [[ -d "$DATA/mysql" && -f "$DIR/port" ]] || die "no server in $DIR to restart"
    port=$(cat "$DIR/port")
    do_stop
    exec 9>&-
    do_start "$port"
}


# do_pause: SIGSTOP the server process, wait, SIGCONT it (the server's clock
# keeps running, its sessions keep their sockets: a frozen VM).  CONT is sent
# even if this script is interrupted.
do_pause() {
    local pid
    [[ -n "$pause_ms" ]] || die "pause needs a duration in ms"
    pid=$(server_pid)
    if ! [[ "$pid" =~ ^[0-9]+$ ]] || ! kill -0 "$pid" 2>/dev/null; then die "not running"; fi
    trap 'kill -CONT "$pid" 2>/dev/null' EXIT
    kill -STOP "$pid"
    log "paused (SIGSTOP) for $pause_ms ms"
    sleep_ms "$pause_ms"
    kill -CONT "$pid"
    trap - EXIT
    log "resumed (SIGCONT)"
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
restart) do_restart ;;
pause) do_pause ;;
status)
    [[ -d "$DATA/mysql" ]] || { log "no server in $DIR"; exit 4; }
    if is_running; then
        log "running: pid $(server_pid), $(cat "$DIR/dsn" 2>/dev/null)"
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
    if [[ -d "$DATA/mysql" ]]; then
        immediate=1
        do_stop
        exec 9>&-
    fi
    if [[ -f "$MARK" ]] || dir_is_empty; then
        rm -rf -- "$DIR"
        log "removed $DIR"
    else
        die "$DIR does not look like a mariadb-ephemeral folder; not removing it"
    fi
    ;;
*) usage; die "unknown command: $cmd" ;;
esac
