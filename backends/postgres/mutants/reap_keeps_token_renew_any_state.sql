-- qchaos MUTANT: the reaper keeps the last token; the renew does not check the state
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/scripts/renew_after_reap.ini.
-- A protocol written by a reviewer of the gate (stop of 2026-12-08), which
-- the whole gate passed: the reaper returns an expired job but keeps its
-- last token in the row ("who held it last", for the audit trail), and the
-- renew (the heartbeat) checks the job id and the token but not that the
-- job is still in flight.  Each rule alone is harmless; together, a worker
-- frozen past its lease whose job the reaper returned (ready, not yet
-- claimed again) has its renew accepted: it is told it still holds the
-- job and goes on, while the next claim hands the same job to another
-- worker.  The random stalls never send the stale renew in that gap (a
-- re-claim comes first, and the new token refuses it); the script does.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper keeps the old token, renew checks id and token but not the state
-- expect: exclusive_claim
-- scenario: scenarios/scripts/renew_after_reap.ini
-- base: ../skip_locked.sql

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
WITH expired AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, j.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
