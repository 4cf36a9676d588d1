-- qchaos test protocol: skip_locked.sql with a per-worker heartbeat step
-- (issue 13: libraries such as graphile-worker keep their jobs' locks alive
-- with one statement per worker, not a renew per job).  The step extends
-- every live lease the worker incarnation holds (locked_by = :worker); the
-- worker runs it instead of renew while it works.  Correct for one job in
-- hand; note that a job its worker gave up (lost_request) stays locked by
-- a live worker and is extended by its heartbeats: the queue cannot tell
-- an abandoned job from a slow one, which recovery reports.
-- note: used by tests/check_witness.c
-- engine: postgres
-- model: lease
-- description: skip_locked.sql with a per-worker heartbeat (extends every lease of :worker)
-- base: ../../backends/postgres/skip_locked.sql

-- name: heartbeat
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE locked_by = :worker AND state = 'inflight'
RETURNING (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
