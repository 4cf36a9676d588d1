-- qchaos unseen protocol (BROKEN): the reaper's dead-letter test is off by
-- one (attempt > max_attempts): a job whose worker crashes on every attempt
-- is claimed max_attempts + 1 times before it is dead-lettered.  fail's test
-- is right (attempt >= max_attempts).
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: reaper dead-letters at attempt > max_attempts
-- expect: bounded_failure
-- base: ../../../backends/postgres/skip_locked.sql

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt > j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt > j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
