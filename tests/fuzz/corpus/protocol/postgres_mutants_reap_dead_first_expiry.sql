-- qchaos MUTANT: reaper that dead-letters a job on its first expired lease
-- Must be caught by: no_lost_jobs.  Exposed by: scenarios/kill_after_claim.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper writes dead on any expiry
-- expect: no_lost_jobs
-- scenario: scenarios/kill_after_claim.ini
-- base: ../skip_locked.sql

-- name: reap
-- run_after is left alone: a recovered job keeps its place at the head of
-- the queue instead of waiting behind the whole backlog.
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = 'dead',
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
