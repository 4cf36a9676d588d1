#!/usr/bin/env bash
# A throwaway PgBouncer in TRANSACTION pooling mode in front of a PostgreSQL,
# for the pooler topology (shared/cases.md C03: session state such as
# session advisory locks does not survive transaction pooling).
#
#   scripts/pgbouncer-ephemeral.sh start DIR 'host=127.0.0.1 port=P user=U dbname=D'
#   scripts/pgbouncer-ephemeral.sh stop  DIR
#
# start prints the pooler's conninfo as the LAST stdout line (the rest goes
# to stderr).  default_pool_size is small (4) so that many clients really
# share few server sessions.  As root, pgbouncer runs as the `postgres` user.
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
  [ -n "$conninfo" ] || die "start needs the server's conninfo"
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
default_pool_size = 4
max_client_conn = 1000
server_reset_query =
ignore_startup_parameters = extra_float_digits,application_name,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; fi
  as_owner "$bin" -d "$dir/pgbouncer.ini" </dev/null >/dev/null 2>&1 3>&- \
    || die "pgbouncer failed to start (see $dir/pgbouncer.log)"
  for _ in $(seq 1 100); do
    if ! port_free "$port"; then
      echo "pgbouncer-ephemeral: transaction pooling on 127.0.0.1:$port -> $pghost:$pgport"
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
