-- qchaos MUTANT: the worker heartbeat matches the worker's stable name, not its incarnation (breaker3 b4)
-- Must be caught by: recovery.  Exposed by: scenarios/gate/heartbeat_restart.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT heartbeat renews every lease of worker 'wN', across restarts (:worker_id)
-- expect: recovery
-- scenario: scenarios/gate/heartbeat_restart.ini
-- base: ../skip_locked_heartbeat.sql

-- name: heartbeat
-- The bug (shared/cases.md C10, C29: a process heartbeat that keeps jobs
-- alive): a worker that crashed and came back under the same name (a pod,
-- a host) renews with every heartbeat the leases its dead incarnation held
-- (locked_by 'w3.0' matched as 'w3'), so those jobs are never reaped while
-- the new incarnation works.
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE state = 'inflight' AND split_part(locked_by, '.', 1) = 'w' || :worker_id::text
RETURNING (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
