-- qchaos unseen protocol (correct): priority queue, bigint fencing token.
-- The claim is one CTE ordered by priority (highest first), then run_after,
-- id, locked FOR UPDATE SKIP LOCKED; the token is a bigint drawn from a
-- sequence (monotonic, never reused) instead of a uuid.  complete, renew
-- and fail are conditional on id AND token AND state; the reaper (from the
-- base) clears the token, so a reclaim always draws a new, larger one.
-- engine: postgres
-- model: lease
-- description: UNSEEN correct: priority-ordered CTE claim, bigint sequence token
-- base: ../../../backends/postgres/skip_locked.sql

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.jobs;
DROP SEQUENCE IF EXISTS qchaos.job_tokens;
CREATE SEQUENCE qchaos.job_tokens AS bigint START 1000;
CREATE TABLE qchaos.jobs (
    id           bigserial PRIMARY KEY,
    state        text NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'done', 'dead')),
    priority     int NOT NULL DEFAULT 0,
    run_after    timestamptz NOT NULL DEFAULT now(),
    attempt      int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    token        bigint,
    lease_until  timestamptz,
    locked_by    text,
    payload      text,
    group_key    text,
    last_error   text
);
CREATE INDEX jobs_ready_prio ON qchaos.jobs (priority DESC, run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs;
DROP SEQUENCE IF EXISTS qchaos.job_tokens;

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after, priority)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000.0),
        (nextval('qchaos.job_tokens') % 3)::int)
RETURNING id AS job_id;

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY priority DESC, run_after, id
    LIMIT :batch::int
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE qchaos.jobs j
    SET state = 'inflight',
        token = nextval('qchaos.job_tokens'),
        attempt = j.attempt + 1,
        lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
        locked_by = :worker
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.id, j.token, j.lease_until, j.attempt, j.payload, j.group_key
)
SELECT id AS job_id,
       token::text AS token,
       (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
       attempt,
       id::text AS op_key,
       payload,
       group_key
FROM claimed;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND token = :token::bigint AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::bigint AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::bigint AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
