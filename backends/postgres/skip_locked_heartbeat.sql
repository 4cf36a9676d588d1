-- qchaos protocol: skip_locked.sql plus a worker heartbeat
-- keyed by the worker incarnation (:worker), as the heartbeat contract says:
-- it extends only the leases this incarnation's claims took.  A restarted
-- worker (a new incarnation) never renews its predecessor's jobs.
-- engine: postgres
-- model: lease
-- description: skip_locked.sql with a worker heartbeat keyed by :worker (the incarnation)
-- base: skip_locked.sql

-- name: heartbeat
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE state = 'inflight' AND locked_by = :worker
RETURNING (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
