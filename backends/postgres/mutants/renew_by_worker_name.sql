-- qchaos MUTANT: the renew extends every lease held under the worker's
-- stable name (locked_by 'w3.0', 'w3.1' ... matched as 'w3'), not the one
-- lease its token names: "keep my jobs alive", as a team writes it when a
-- pod or host name is the worker's identity (shared/cases.md C10, C29).
-- A worker killed after a claim and restarted under the same name renews,
-- with every renew of its new claim, the lease its dead incarnation held,
-- so that job is never reaped while the new incarnation works.  The token
-- still decides what the worker is told, so a stale renew is refused as
-- usual and no token checker sees anything.
-- Must be caught by: recovery.  Exposed by:
-- scenarios/gate/heartbeat_restart.ini (the gate runs it for every
-- protocol that renews, decision 1102).
-- engine: postgres
-- model: lease
-- description: MUTANT renew extends every lease of worker 'wN', across restarts (:worker_id)
-- expect: recovery
-- scenario: scenarios/gate/heartbeat_restart.ini
-- base: ../skip_locked.sql

-- name: renew
WITH mine AS (
    UPDATE qchaos.jobs
    SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
    WHERE state = 'inflight'
      AND split_part(locked_by, '.', 1) = 'w' || :worker_id::text
    RETURNING id, token, lease_until
)
SELECT token::text AS token,
       (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
FROM mine
WHERE id = :job_id::bigint AND token = :token::uuid;
