-- qchaos unseen protocol (BROKEN): a done-table queue (complete moves the
-- row to qchaos.jobs_done, header "missing: done") whose reaper deletes a job
-- that used up its attempts instead of dead-lettering it ("nobody reads the
-- dead ones").  Such a job never finished, but it is gone from qchaos.jobs
-- just as a finished one is: no dead letter, no error kept.
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: done-table queue whose reaper deletes exhausted jobs
-- missing: done
-- expect: no_lost_jobs, bounded_failure
-- base: ok_done_table.sql

-- name: reap
WITH expired AS (
    SELECT id, token, attempt, max_attempts
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
), dropped AS (
    DELETE FROM qchaos.jobs j
    USING expired e
    WHERE j.id = e.id AND e.attempt >= e.max_attempts
    RETURNING j.id, e.token
), back AS (
    UPDATE qchaos.jobs j
    SET state = 'ready', token = NULL, lease_until = NULL, locked_by = NULL
    FROM expired e
    WHERE j.id = e.id AND e.attempt < e.max_attempts
    RETURNING j.id, e.token, j.state
)
SELECT id AS job_id, token::text AS token, state,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
FROM back;
