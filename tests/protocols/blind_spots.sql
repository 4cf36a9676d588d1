-- qchaos test protocol: skip_locked.sql with two blind spots the loader
-- must name (issue 18): its enqueue ignores :max_attempts (every job gets
-- the table's default limit, whatever the scenario says), and its reap
-- returns no now_ms (no_early_reap cannot place a reap on the server
-- clock).  Otherwise correct.
-- note: used by tests/check_e2e.c
-- engine: postgres
-- model: lease
-- description: skip_locked.sql whose enqueue ignores :max_attempts and whose reap returns no server time
-- base: ../../backends/postgres/skip_locked.sql

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, run_after)
VALUES (:payload, :group_key, now() + make_interval(secs => :delay_ms::int / 1000.0))
RETURNING id AS job_id;

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state;
