# shellcheck shell=bash
# prog, usage_lines, timeout are the caller's; immediate is read by it.
# shellcheck disable=SC2154,SC2034
# What pg-ephemeral.sh and mariadb-ephemeral.sh share; sourced by both,
# after they set prog (the name in messages) and usage_lines (the header
# lines usage prints) and point stdout at stderr (fd 3 = the real stdout).
#
# parse_args CMD DIR [--immediate] [MS] sets cmd, dir_arg, immediate and
# pause_ms (MS only for "pause").  The functions below DIR, OWNER and
# timeout use the caller's values of those variables.

die() { echo "$prog: ERROR: $*" >&2; exit 1; }

# The scripts' own clients (pg_isready, psql, pg_ctl, mariadb,
# mariadb-admin) talk to the throwaway server only: the user's PG* and
# MYSQL* settings (PGSSLMODE=require, PGHOST, PGSERVICE, PGPASSFILE,
# MYSQL_PWD ...) name or shape another target and must not reach them.
# The scripts' own knobs (PG_BINDIR, PG_EPHEMERAL_*, MARIADB_EPHEMERAL_*)
# stay.  Done when this file is sourced.
scrub_client_env() {
    local v
    for v in $(compgen -e); do
        case "$v" in
        PG_* | MARIADB_EPHEMERAL_*) ;;
        PG[A-Z]* | MYSQL* | MARIADB_*) unset "$v" ;;
        esac
    done
}
scrub_client_env
log() { echo "$prog: $*" >&2; }
# the scripts cd / later (the server user may not enter the caller's cwd)
script_path=$(readlink -f -- "$0")
usage() { sed -n "2,${usage_lines}s/^# \{0,1\}//p" "$script_path" >&2; }

parse_args() {
    cmd=${1:-}
    dir_arg=${2:-}
    [[ -n "$cmd" && -n "$dir_arg" ]] || { usage; exit 2; }
    shift 2
    immediate=0
    pause_ms=
    local a
    for a in "$@"; do
        case "$a" in
        --immediate) immediate=1 ;;
        [0-9]*) [[ "$cmd" == pause && -z "$pause_ms" && "$a" =~ ^[0-9]+$ ]] ||
            { usage; die "unknown argument: $a"; }
            pause_ms=$a ;;
        *) usage; die "unknown argument: $a" ;;
        esac
    done
}

# proc_live PID: PID exists and is not a zombie, whatever it runs.  A child
# just started with `cmd &` shows its parent's comm (bash) until it has
# exec'd, which under load takes a while: judge "did it die?" with this,
# never with the program name.  Via /proc because an orphaned server may
# linger as a zombie when PID 1 does not reap.
proc_live() {
    local st
    [[ "${1:-}" =~ ^[0-9]+$ ]] || return 1
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [[ "${st%% *}" != Z && "${st%% *}" != X ]]
}

# proc_is PID NAME...: proc_live PID and it runs one of the NAMEs (comm):
# "is this pid still our server?" (pid files outlive their processes).
proc_is() {
    local pid=$1 comm n
    shift
    proc_live "$pid" || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    for n in "$@"; do [[ "$comm" == "$n" ]] && return 0; done
    return 1
}

now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
elapsed() { local ms=$(($(now_ms) - $1)); printf '%d.%03ds' $((ms / 1000)) $((ms % 1000)); }
sleep_ms() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }

# As root the server runs as OWNER, who must be able to reach DIR.
prepare_dir() {
    ((EUID == 0)) || return 0
    chown "$OWNER": "$DIR"
    chmod 0700 "$DIR"
    local p=$DIR
    while p=$(dirname -- "$p") && [[ "$p" != / ]]; do
        if ! runuser -u "$OWNER" -- test -x "$p" 2>/dev/null; then
            case "$p" in
            /tmp/* | "${TMPDIR:-/tmp}"/*)
                log "granting o+x on $p so user $OWNER can reach $DIR"
                chmod o+x -- "$p"
                ;;
            *) die "user $OWNER cannot enter $p (a parent of $DIR): chmod o+x it or use another DIR" ;;
            esac
        fi
    done
}

port_in_use() {
    local port=$1
    if command -v ss >/dev/null 2>&1; then
        # any TCP socket on that local port, except TIME-WAIT leftovers of
        # closed connections (the servers bind with SO_REUSEADDR)
        [[ -n "$(ss -Htan exclude time-wait "( sport = :$port )" 2>/dev/null)" ]]
    else
        (exec 4<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
    fi
}

free_port() {
    local lo=20000 n=12768 base i port
    base=$(((RANDOM * 32768 + RANDOM) % n))
    for ((i = 0; i < 1000; i++)); do
        port=$((lo + (base + i) % n))
        if ! port_in_use "$port"; then
            echo "$port"
            return 0
        fi
    done
    die "no free TCP port found in 20000-32767"
}

dir_is_empty() {
    local f
    for f in "$DIR"/* "$DIR"/.[!.]* "$DIR"/..?*; do
        [[ -e "$f" || -L "$f" ]] || continue
        [[ "$f" == "$DIR/.lock" ]] || return 1
    done
    return 0
}

# One command at a time per folder (start, stop, restart, destroy).
lock() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>"$DIR/.lock"
    # at least 60 s: a restart holding the lock may itself wait $timeout
    flock -w "$((timeout > 60 ? timeout : 60))" 9 || die "timed out waiting for the lock on $DIR"
}
