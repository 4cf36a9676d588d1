-- qchaos MUTANT: the heartbeat writes the worker's whole in-memory row back
-- (shared/cases.md C30, SAQ PR #215: job.update() wrote status with the
-- rest, by key alone).  A stalled owner's renew, sent after the reaper took
-- its job back and another worker claimed it, sets the row to its own
-- 'inflight', token and lease again: the new owner's claim is overwritten
-- (its token no longer matches, its complete is refused) and the stale
-- owner is told it still holds the job.
-- Must be caught by: stale_token_rejected (the stale renew changed a row),
-- exclusive_claim (two live leases).  Exposed by:
-- scenarios/gate/stale_complete.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT renew writes state, token and lease by job id alone (C30)
-- expect: stale_token_rejected,exclusive_claim
-- scenario: scenarios/gate/stale_complete.ini
-- base: ../skip_locked.sql

-- name: renew
UPDATE qchaos.jobs
SET state = 'inflight',
    token = :token::uuid,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
