-- qchaos MUTANT: reap that ignores lease expiry
-- Must be caught by: no_early_reap, exclusive_claim.  Exposed by: scenarios/kill_after_claim.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper takes back every in-flight job, expired or not
-- expect: no_early_reap, exclusive_claim
-- scenario: scenarios/kill_after_claim.ini
-- base: ../skip_locked.sql

-- name: reap
-- The bug: the reaper returns every in-flight job to ready, live leases too.
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight'
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
