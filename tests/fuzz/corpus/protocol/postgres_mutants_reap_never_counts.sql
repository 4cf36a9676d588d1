-- qchaos MUTANT: reap that never counts the lost attempt (a crashing poison job loops forever)
-- Must be caught by: bounded_failure, no_lost_jobs.  Exposed by: scenarios/cases/c12_poison_crash.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper returns every expired job to ready, never to dead
-- expect: bounded_failure, no_lost_jobs
-- scenario: scenarios/cases/c12_poison_crash.ini
-- base: ../skip_locked.sql

-- name: reap
-- The bug: orphan rescue puts the job back without comparing attempts with
-- max_attempts (shared/cases.md C12): a job that crashes its worker is
-- retried forever.
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = 'ready', token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
