#!/usr/bin/env bash
# A throwaway replicated PostgreSQL: a primary and a streaming replica.
#
#   scripts/pg-replicated.sh start      DIR [--sync]  create (if needed) and start both
#   scripts/pg-replicated.sh stop       DIR           stop both (-m fast)
#   scripts/pg-replicated.sh destroy    DIR           stop (immediate) and remove DIR
#   scripts/pg-replicated.sh promote    DIR           promote the replica (pg_ctl promote)
#   scripts/pg-replicated.sh dsn        DIR           print the multi-host conninfo
#   scripts/pg-replicated.sh status     DIR           which node is primary, replication state
#   scripts/pg-replicated.sh failover   DIR [LAG_MS]  kill -9 the primary, promote the replica
#   scripts/pg-replicated.sh switchover DIR           stop the primary cleanly, promote
#   scripts/pg-replicated.sh unfenced   DIR MS        promote; the old primary stays up MS ms
#   scripts/pg-replicated.sh kill-primary DIR [LAG_MS] failover's first half (no promote)
#   scripts/pg-replicated.sh stop-primary DIR         switchover's first half (no promote)
#
# start prints, as the LAST line of stdout (the rest goes to stderr):
#   host=127.0.0.1,127.0.0.1 port=P1,P2 target_session_attrs=read-write
#   dbname=postgres user=postgres sslmode=disable gssencmode=disable
# (one line), libpq's multi-host form: a client takes the first host that
# accepts read-write sessions, as applications on a replicated cluster do.
# It is also written to DIR/dsn.  Asynchronous replication by default;
# --sync sets synchronous_standby_names to the replica with
# synchronous_commit = on (a commit is acknowledged once the replica has
# flushed its WAL).  DIR/mode holds async or sync.
#
# Layout: DIR/primary and DIR/replica are scripts/pg-ephemeral.sh folders
# (DIR/NODE/data, sock, log, port).  The replica is made with
# pg_basebackup -R through the physical replication slot qchaos_replica,
# hot_standby on; it streams from the primary's port.
#
# The faults (run by the qchaos nemesis, see README "Failover"):
# - failover: with LAG_MS > 0 the primary's walsender is frozen (SIGSTOP)
#   for LAG_MS ms first, so the replica falls behind while the primary goes
#   on acknowledging commits (asynchronous: acknowledged and never sent;
#   synchronous: the commits wait for the replica); then every process of
#   the primary is frozen and killed with SIGKILL at once (a machine lost),
#   and the replica is promoted (pg_ctl promote -w).
# - switchover: pg_ctl stop -m fast on the primary (its walsender sends
#   the WAL up to the shutdown checkpoint first), then promote.
# - unfenced: promote the replica while the old primary keeps running and
#   accepting writes for MS ms; then kill -9 the old primary.
# Each fault runs once: afterwards the old primary is down for good (no
# pg_rewind), and DIR/primary_node names the node that is primary now.
# Environment: as pg-ephemeral.sh (PG_BINDIR, PG_EPHEMERAL_TIMEOUT).
set -euo pipefail

exec 3>&1 1>&2

prog=pg-replicated
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
EPH=$here/pg-ephemeral.sh
die() { echo "$prog: ERROR: $*" >&2; exit 1; }
log() { echo "$prog: $*" >&2; }
usage() { sed -n "2,15s/^# \{0,1\}//p" "$(readlink -f -- "$0")" >&2; }

cmd=${1:-}
dir_arg=${2:-}
[[ -n "$cmd" && -n "$dir_arg" ]] || { usage; exit 2; }
shift 2
sync=0
arg_ms=
for a in "$@"; do
    case "$a" in
    --sync) [[ "$cmd" == start ]] || { usage; die "--sync is for start only"; }; sync=1 ;;
    [0-9]*) [[ "$a" =~ ^[0-9]+$ && -z "$arg_ms" ]] && [[ "$cmd" == failover || "$cmd" == kill-primary || "$cmd" == unfenced ]] ||
        { usage; die "unknown argument: $a"; }
        arg_ms=$a ;;
    *) usage; die "unknown argument: $a" ;;
    esac
done
timeout=${PG_EPHEMERAL_TIMEOUT:-60}

# The scripts' own clients talk to these servers only (as ephemeral-lib.sh).
for v in $(compgen -e); do
    case "$v" in
    PG_*) ;;
    PG[A-Z]*) unset "$v" ;;
    esac
done

find_bindir() {
    local d
    if [[ -n "${PG_BINDIR:-}" ]]; then echo "$PG_BINDIR"; return; fi
    d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null |
        sort -t/ -k5,5n | tail -n1)
    [[ -n "$d" && -x "$d/pg_basebackup" ]] ||
        die "no PostgreSQL server binaries (pg_basebackup) found; run scripts/install-deps.sh"
    echo "$d"
}
BIN=$(find_bindir)
PSQL=$BIN/psql
[[ -x "$PSQL" ]] || PSQL=$(command -v psql) || die "psql not found"

case "$cmd" in
start) mkdir -p -- "$dir_arg" || die "cannot create folder $dir_arg" ;;
esac
if [[ -d "$dir_arg" ]]; then DIR=$(cd -- "$dir_arg" && pwd -P); else DIR=$(realpath -m -- "$dir_arg"); fi
cd /
MARK=$DIR/.pg-replicated
case "$cmd" in
start | destroy | stop | status) ;;
*) [[ -f "$MARK" ]] || die "no pg-replicated topology in $DIR (start one with: $prog.sh start DIR)" ;;
esac
if ((EUID == 0)); then RUNAS=(runuser -u postgres --); OWNER=postgres; else RUNAS=(); OWNER=$(id -un); fi
as_owner() { "${RUNAS[@]}" "$@" 3>&- 9>&-; }

now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
sleep_ms() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }
node_conn() { echo "host=127.0.0.1 port=$(cat "$DIR/$1/port") user=postgres dbname=postgres sslmode=disable gssencmode=disable"; }
q() { "$PSQL" -X -Atq -v ON_ERROR_STOP=1 "$(node_conn "$1")" -c "$2"; }
postmaster_pid() { head -n1 "$DIR/$1/data/postmaster.pid" 2>/dev/null || true; }

multi_dsn() {
    echo "host=127.0.0.1,127.0.0.1 port=$(cat "$DIR/primary/port"),$(cat "$DIR/replica/port") target_session_attrs=read-write dbname=postgres user=postgres sslmode=disable gssencmode=disable"
}

lock() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>"$DIR/.lock-replicated"
    flock -w "$((timeout > 60 ? timeout : 60))" 9 || die "timed out waiting for the lock on $DIR"
}

# wait_for WHAT CMD...: poll CMD every 0.1 s until it succeeds, up to $timeout s.
wait_for() {
    local what=$1 deadline=$((SECONDS + timeout))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for $what"
        sleep 0.1
    done
}

streaming() {
    local want=$1 st
    st=$(q primary "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'qchaos_replica' AND state = 'streaming'")
    [[ -n "$st" && ( "$want" == any || "$st" == "$want" ) ]]
}

do_start() {
    local t0 pdsn port
    t0=$(now_ms)
    if [[ ! -f "$MARK" ]] && [[ -n "$(ls -A "$DIR" 2>/dev/null | grep -v '^\.lock')" ]]; then
        die "$DIR is not empty and holds no pg-replicated topology; refusing to use it"
    fi
    touch "$MARK"
    ((EUID != 0)) || { chown "$OWNER": "$DIR"; chmod 0755 "$DIR"; }
    lock
    if [[ -f "$DIR/primary_node" && "$(cat "$DIR/primary_node")" != primary ]]; then
        die "$DIR had a failover (the primary is now $(cat "$DIR/primary_node")); destroy it and start again"
    fi
    pdsn=$("$EPH" start "$DIR/primary" | tail -n1)
    [[ -n "$pdsn" ]] || die "the primary did not start"
    if [[ ! -f "$DIR/replica/data/PG_VERSION" ]]; then
        "$PSQL" -X -q -v ON_ERROR_STOP=1 "$pdsn" -c "SET client_min_messages = warning" \
            -c "SELECT pg_create_physical_replication_slot('qchaos_replica') WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = 'qchaos_replica')" >/dev/null ||
            die "cannot create the replication slot"
        mkdir -p "$DIR/replica"
        touch "$DIR/replica/.pg-ephemeral"
        ((EUID != 0)) || { chown "$OWNER": "$DIR/replica"; chmod 0700 "$DIR/replica"; }
        as_owner mkdir -p "$DIR/replica/sock"
        as_owner chmod 0700 "$DIR/replica/sock"
        port=$(cat "$DIR/primary/port")
        log "pg_basebackup -R from 127.0.0.1:$port into $DIR/replica/data"
        as_owner "$BIN/pg_basebackup" -D "$DIR/replica/data" -R -S qchaos_replica -X stream \
            -c fast -h 127.0.0.1 -p "$port" -U postgres --no-sync >"$DIR/replica/basebackup.log" 2>&1 ||
            { cat "$DIR/replica/basebackup.log" >&2; die "pg_basebackup failed"; }
        as_owner tee -a "$DIR/replica/data/postgresql.conf" >/dev/null <<CONF

# --- streaming replica (qchaos scripts/pg-replicated.sh) ---
unix_socket_directories = '$DIR/replica/sock'
hot_standby = on
wal_receiver_status_interval = 1s
CONF
        as_owner tee -a "$DIR/replica/data/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=127.0.0.1 port=$port user=postgres application_name=qchaos_replica sslmode=disable gssencmode=disable'
CONF
    fi
    "$EPH" start "$DIR/replica" >/dev/null || die "the replica did not start"
    wait_for "the replica to stream from the primary" streaming any
    if ((sync)); then
        q primary "ALTER SYSTEM SET synchronous_standby_names = 'qchaos_replica'" >/dev/null
        q primary "SELECT pg_reload_conf()" >/dev/null
        wait_for "the replica to be the synchronous standby" streaming sync
        echo sync >"$DIR/mode"
    elif [[ ! -f "$DIR/mode" ]]; then
        echo async >"$DIR/mode"
    fi
    echo primary >"$DIR/primary_node"
    multi_dsn >"$DIR/dsn"
    log "$(cat "$DIR/mode") replication: primary 127.0.0.1:$(cat "$DIR/primary/port"), replica 127.0.0.1:$(cat "$DIR/replica/port"), ready in $(($(now_ms) - t0)) ms"
    multi_dsn >&3
}

# kill_node NODE: freeze every process of the node, then SIGKILL them all
# (a lost machine: no backend gets to answer once the first one is gone).
kill_node() {
    local pm pids
    pm=$(postmaster_pid "$1")
    [[ "$pm" =~ ^[0-9]+$ ]] && kill -0 "$pm" 2>/dev/null || die "the $1 is not running"
    pids="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
    # shellcheck disable=SC2086 # one word per pid
    kill -STOP $pids 2>/dev/null || true
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    log "killed the $1 (SIGKILL to $(wc -w <<<"$pids") processes)"
}

do_promote() {
    [[ "$(q replica "SELECT pg_is_in_recovery()")" == t ]] || die "the replica is not in recovery (promoted already?)"
    as_owner "$BIN/pg_ctl" promote -D "$DIR/replica/data" -w -t "$timeout" >/dev/null ||
        die "pg_ctl promote failed"
    wait_for "the promoted replica to accept writes" \
        bash -c "[[ \$('$PSQL' -X -Atq '$(node_conn replica)' -c 'SELECT pg_is_in_recovery()') == f ]]"
    echo replica >"$DIR/primary_node"
    log "promoted the replica (127.0.0.1:$(cat "$DIR/replica/port"))"
}

# freeze_walsender: SIGSTOP the primary's walsender; echo its pid.
freeze_walsender() {
    local pm ws
    pm=$(postmaster_pid primary)
    ws=$(pgrep -P "$pm" -f 'walsender' | tr '\n' ' ')
    [[ -n "$ws" ]] || die "no walsender on the primary (is the replica streaming?)"
    # shellcheck disable=SC2086
    kill -STOP $ws
    echo "$ws"
}

# replica_caught_up: the replica's walreceiver is gone (it saw the primary
# go) and it has replayed every byte of WAL it received and flushed: what a
# promotion would start from is visible to a read on the replica now.
replica_caught_up() {
    [[ "$(q replica "SELECT count(*) = 0 FROM pg_stat_wal_receiver WHERE status = 'streaming'")" == t ]] &&
        [[ "$(q replica "SELECT pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()")" == t ]]
}

kill_primary() {
    local lag=${arg_ms:-0} ws
    [[ "$(cat "$DIR/primary_node" 2>/dev/null)" == primary ]] || die "no failover left to do: the primary is already the $(cat "$DIR/primary_node" 2>/dev/null || echo unknown)"
    if ((lag > 0)); then
        ws=$(freeze_walsender)
        log "walsender $ws frozen for $lag ms ($(cat "$DIR/mode") replication)"
        sleep_ms "$lag"
    fi
    kill_node primary
    echo none >"$DIR/primary_node"
    wait_for "the replica to replay what it received" replica_caught_up
}

stop_primary() {
    [[ "$(cat "$DIR/primary_node" 2>/dev/null)" == primary ]] || die "no switchover left to do"
    "$EPH" stop "$DIR/primary" >/dev/null || die "the primary did not stop"
    echo none >"$DIR/primary_node"
    wait_for "the replica to replay what it received" replica_caught_up
}

do_failover() {
    local t0
    lock
    t0=$(now_ms)
    kill_primary
    do_promote
    log "failover done in $(($(now_ms) - t0)) ms"
}

do_switchover() {
    local t0
    lock
    t0=$(now_ms)
    stop_primary
    do_promote
    log "switchover done in $(($(now_ms) - t0)) ms"
}

do_unfenced() {
    [[ -n "$arg_ms" ]] || die "unfenced needs a window in ms"
    lock
    [[ "$(cat "$DIR/primary_node" 2>/dev/null)" == primary ]] || die "no promotion left to do"
    do_promote
    log "the old primary keeps accepting writes for $arg_ms ms (not fenced)"
    # A kill of this script (the run ended) must still fence it.
    trap 'trap - EXIT; kill_node primary || true' EXIT
    trap 'exit 143' TERM INT
    sleep_ms "$arg_ms"
    trap - EXIT TERM INT
    kill_node primary
}

do_status() {
    local n
    [[ -f "$MARK" ]] || { log "no topology in $DIR"; exit 4; }
    for n in primary replica; do
        if "$EPH" status "$DIR/$n" >/dev/null 2>&1; then
            log "$n 127.0.0.1:$(cat "$DIR/$n/port"): running, in recovery: $(q "$n" "SELECT pg_is_in_recovery()" 2>/dev/null || echo '?')"
        else
            log "$n: stopped"
        fi
    done
    log "mode $(cat "$DIR/mode" 2>/dev/null || echo '?'), primary now: $(cat "$DIR/primary_node" 2>/dev/null || echo '?')"
}

case "$cmd" in
start) do_start ;;
stop)
    [[ -f "$MARK" ]] || { log "no topology in $DIR"; exit 0; }
    for n in replica primary; do
        [[ -d "$DIR/$n" ]] && "$EPH" stop "$DIR/$n" >/dev/null
    done
    ;;
destroy)
    [[ -e "$DIR" ]] || { log "$DIR does not exist"; exit 0; }
    [[ -f "$MARK" ]] || [[ -z "$(ls -A "$DIR" 2>/dev/null | grep -v '^\.lock')" ]] ||
        die "$DIR does not look like a pg-replicated folder; not removing it"
    for n in replica primary; do
        [[ -d "$DIR/$n" ]] && { "$EPH" destroy "$DIR/$n" >/dev/null || log "destroy of the $n failed"; }
    done
    rm -rf -- "$DIR"
    log "removed $DIR"
    ;;
promote) lock; do_promote ;;
dsn) [[ -f "$DIR/dsn" ]] || die "no dsn in $DIR (never started?)"; cat "$DIR/dsn" >&3 ;;
status) do_status ;;
failover) do_failover ;;
switchover) do_switchover ;;
kill-primary) lock; kill_primary ;;
stop-primary) lock; stop_primary ;;
unfenced) do_unfenced ;;
*) usage; die "unknown command: $cmd" ;;
esac
