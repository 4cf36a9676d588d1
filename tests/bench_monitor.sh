#!/usr/bin/env bash
# A benchmark, not a test (issue 16): the server time of one monitor sample,
# the full `monitor` step against `monitor_live`, of
# backends/postgres/skip_locked.sql, on a queue table made by the
# protocol's own setup and filled the way a run leaves it mid-drain: ROWS
# rows of which LIVE are ready, 16 in flight (a few expired), 10 dead and
# the rest done (VACUUM ANALYZE first).  For each table size it prints the
# median and max "Execution Time" of EXPLAIN (ANALYZE) over REPS samples,
# and the buffers the last one read.
#
#   tests/bench_monitor.sh DSN [ROWS...]     (default ROWS: 20000 1430000)
#
# The DSN's server must not be running a qchaos run (the schema qchaos is
# made and dropped here).  Environment: LIVE (default 1000), REPS (20).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dsn=${1:?usage: tests/bench_monitor.sh DSN [ROWS...]}
shift
sizes=${*:-"20000 1430000"}
live=${LIVE:-1000}
reps=${REPS:-20}
proto=backends/postgres/skip_locked.sql
step() { # the SQL of step $1 of $proto, comments and directives dropped
  awk -v want="$1" '/^-- name: /{cur=$3; next} cur==want && !/^--/' "$proto"
}
psqlq() { PGOPTIONS='-c client_min_messages=warning' psql "$dsn" -X -q -v ON_ERROR_STOP=1 "$@"; }
ms() { # statement -> Execution Time of each of $reps runs, ms, one a line
  local i
  for i in $(seq "$reps"); do
    psqlq -At -c "EXPLAIN (ANALYZE, TIMING OFF) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p'
  done
}
stats() { sort -n | awk '{v[NR]=$1} END {printf "median %.3f ms, max %.3f ms", v[int((NR+1)/2)], v[NR]}'; }
echo "bench_monitor: $(psqlq -At -c 'SHOW server_version') on $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); $reps samples each, $live ready rows"
for n in $sizes; do
  psqlq -c "$(step setup)" >/dev/null || exit 2
  psqlq >/dev/null <<SQL || exit 2
INSERT INTO qchaos.jobs (state, payload, attempt) SELECT 'done', 'job-' || g, 1 FROM generate_series(1, $n - $live - 26) g;
INSERT INTO qchaos.jobs (state, payload) SELECT 'ready', 'job-' || g FROM generate_series(1, $live) g;
INSERT INTO qchaos.jobs (state, payload, attempt, token, lease_until)
  SELECT 'inflight', 'job-' || g, 1, gen_random_uuid(),
         now() + CASE WHEN g <= 3 THEN interval '-1 s' ELSE interval '1 min' END
  FROM generate_series(1, 16) g;
INSERT INTO qchaos.jobs (state, payload, attempt) SELECT 'dead', 'job-' || g, 3 FROM generate_series(1, 10) g;
VACUUM ANALYZE qchaos.jobs;
SQL
  for s in monitor monitor_live; do
    sql=$(step "$s")
    printf '%8d rows  %-13s %s' "$n" "$s" "$(ms "$sql" | stats)"
    psqlq -At -c "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) $sql" |
      sed -n '1,/Planning/{s/.*Buffers: \(.*\)/\1/p}' | head -1 | sed 's/^/, first node buffers: /'
  done
  psqlq -c "$(step teardown)" -c 'DROP SCHEMA IF EXISTS qchaos' >/dev/null
done
