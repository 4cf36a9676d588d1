#!/usr/bin/env bash
# A throwaway PgBouncer in TRANSACTION pooling mode in front of a PostgreSQL,
# for the pooler topology (shared/cases.md C03: session state such as
# session advisory locks does not survive transaction pooling).
#
#   scripts/pgbouncer-ephemeral.sh start DIR 'host=127.0.0.1 port=P user=U dbname=D' [CLIENTS [POOL]]
#   scripts/pgbouncer-ephemeral.sh stop  DIR
#
# start prints the pooler's conninfo as the LAST stdout line (the rest goes
# to stderr).  POOL (default_pool_size, default 4) is small so that many
# clients really share few server sessions; CLIENTS (max_client_conn,
# default 1000) is how many client connections it accepts at once.  Each
# client connection is a file descriptor of pgbouncer's, and runuser's
# pam_limits gives the `postgres` user a soft limit of 1024 descriptors, so
# the soft limit is raised to CLIENTS + POOL + 64 (at most the hard limit;
# refused with a message when the hard limit is lower) before pgbouncer
# starts.  As root, pgbouncer runs as the `postgres` user.
set -euo pipefail
exec 3>&1 1>&2

die() { echo "pgbouncer-ephemeral: $*" >&2; exit 1; }
cmd=${1:-}; dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then die "usage: $0 start|stop DIR [CONNINFO]"; fi
bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$bin" ] || die "pgbouncer not installed (scripts/install-deps.sh installs it)"

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_free() { ! (exec 9<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case "$cmd" in
start)
  conninfo=${3:-}
  clients=${4:-1000}
  pool=${5:-4}
  [ -n "$conninfo" ] || die "start needs the server's conninfo"
  [[ "$clients" =~ ^[1-9][0-9]*$ ]] || die "CLIENTS must be a positive integer, got '$clients'"
  [[ "$pool" =~ ^[1-9][0-9]*$ ]] || die "POOL must be a positive integer, got '$pool'"
  fds=$((clients + pool + 64))
  pghost=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<<"$conninfo")
  pgport=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$conninfo")
  pguser=$(sed -n 's/.*user=\([^ ]*\).*/\1/p' <<<"$conninfo")
  pgdb=$(sed -n 's/.*dbname=\([^ ]*\).*/\1/p' <<<"$conninfo")
  : "${pghost:=127.0.0.1}" "${pguser:=postgres}" "${pgdb:=postgres}"
  [ -n "$pgport" ] || die "no port= in the conninfo"
  mkdir -p "$dir"
  port=""
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 12000))
    if port_free "$p"; then port=$p; break; fi
  done
  [ -n "$port" ] || die "no free port found"
  printf '"%s" ""\n' "$pguser" > "$dir/userlist.txt"
  cat > "$dir/pgbouncer.ini" <<INI
[databases]
* = host=$pghost port=$pgport
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool
max_client_conn = $clients
server_reset_query =
; SHOW POOLS / SHOW SERVERS on the admin console (dbname=pgbouncer), for
; benchmarks counting the server connections in use
admin_users = $pguser
ignore_startup_parameters = extra_float_digits,application_name,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; fi
  # the descriptor limit is raised in the shell that becomes pgbouncer:
  # runuser's pam_limits resets the soft limit
  as_owner bash -c 'ulimit -Sn "$1" 2>/dev/null || {
      echo "pgbouncer-ephemeral: $2 clients need $1 file descriptors, the hard limit is $(ulimit -Hn)" >&2
      exit 1; }; exec "$3" -d "$4"' pgbouncer-start "$fds" "$clients" "$bin" "$dir/pgbouncer.ini" \
    </dev/null >/dev/null 2>"$dir/start.err" 3>&- \
    || die "pgbouncer failed to start: $(cat "$dir/start.err" 2>/dev/null) (see $dir/pgbouncer.log)"
  for _ in $(seq 1 100); do
    if ! port_free "$port"; then
      echo "pgbouncer-ephemeral: transaction pooling on 127.0.0.1:$port -> $pghost:$pgport ($clients clients, $pool server connections, $fds descriptors)"
      # explicit sslmode: a PGSSLMODE=require of the user's must not
      # make clients ask this TLS-less pooler for TLS
      echo "host=127.0.0.1 port=$port user=$pguser dbname=$pgdb sslmode=disable" >&3
      exit 0
    fi
    sleep 0.05
  done
  die "pgbouncer did not listen on $port (see $dir/pgbouncer.log)"
  ;;
stop)
  if [ -f "$dir/pgbouncer.pid" ]; then
    pid=$(cat "$dir/pgbouncer.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  ;;
*) die "unknown command '$cmd'" ;;
esac
