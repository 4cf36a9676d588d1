-- qchaos MUTANT: reaper that takes leases a second before they expire, and returns no time
-- Must be caught by: no_early_reap.  Exposed by: scenarios/kill_after_claim.ini.
-- Issue 18: the reap returns only the job id and the old token, no now_ms,
-- as the reap contract allows; the reap rule of no_early_reap must then
-- bound the reap's server time from the claim's (an upper bound: the claim's
-- now + the client time from its invoke to the reap's answer) instead of
-- staying silent.  The reaper's clock is a second ahead of the database's
-- (shared/cases.md C24: the lease judged on another node's clock).
-- engine: postgres
-- model: lease
-- description: MUTANT reaper takes leases 1 s before they expire and reports no server time
-- expect: no_early_reap
-- scenario: scenarios/kill_after_claim.ini
-- base: ../skip_locked.sql

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now() + interval '1 second'
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token;
