-- qchaos unseen protocol (correct): the reaper deletes an expired job's row
-- and re-inserts it (same id, attempt kept, no token, no lease) in one
-- statement.  A stale owner's complete / renew / fail waits on the deleted
-- row's lock, finds it deleted and matches 0 rows; the fresh row is only
-- visible to statements that start after the reap commits, and has no token,
-- so the old token never matches again.
-- engine: postgres
-- model: lease
-- description: UNSEEN correct: reaper deletes the expired row and re-inserts it
-- base: ../../../backends/postgres/skip_locked.sql

-- name: reap
WITH expired AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM qchaos.jobs j
    USING expired e
    WHERE j.id = e.id
    RETURNING j.*
), back AS (
    INSERT INTO qchaos.jobs (id, state, run_after, attempt, max_attempts, token,
                             lease_until, locked_by, payload, group_key, last_error, created_at)
    SELECT id,
           CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
           run_after, attempt, max_attempts, NULL, NULL, NULL, payload, group_key,
           CASE WHEN attempt >= max_attempts
                THEN 'lease expired on attempt ' || attempt ELSE last_error END,
           created_at
    FROM gone
    RETURNING id, state
)
SELECT b.id AS job_id, g.token::text AS token, b.state,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
FROM back b JOIN gone g ON g.id = b.id;
