-- qchaos unseen protocol (correct): the lease lives in a separate table.
-- qchaos.jobs holds the job's state and attempt count; qchaos.leases holds
-- one row per in-flight job (token, worker, lease_until).  The claim is one
-- statement: the SKIP LOCKED pick, the job's state change and the lease
-- insert are data-modifying CTEs of one statement.  complete and fail first
-- DELETE the lease row by job id AND token (a row lock: a concurrent reap or
-- reclaim either deleted it already, 0 rows, or waits behind us), then change
-- the job; renew updates the lease row by job id AND token.  The reaper locks
-- expired lease rows SKIP LOCKED, deletes them and puts their jobs back.
-- engine: postgres
-- model: lease
-- description: UNSEEN correct: lease and token in a separate leases table
-- base: ../../../backends/postgres/skip_locked.sql

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.leases;
DROP TABLE IF EXISTS qchaos.jobs;
CREATE TABLE qchaos.jobs (
    id           bigserial PRIMARY KEY,
    state        text NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'done', 'dead')),
    run_after    timestamptz NOT NULL DEFAULT now(),
    attempt      int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    payload      text,
    group_key    text,
    last_error   text
);
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';
CREATE TABLE qchaos.leases (
    job_id      bigint PRIMARY KEY REFERENCES qchaos.jobs (id),
    token       uuid NOT NULL,
    worker      text NOT NULL,
    lease_until timestamptz NOT NULL
);
CREATE INDEX leases_until ON qchaos.leases (lease_until);

-- name: teardown
DROP TABLE IF EXISTS qchaos.leases;
DROP TABLE IF EXISTS qchaos.jobs;

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    LIMIT :batch::int
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE qchaos.jobs j
    SET state = 'inflight', attempt = j.attempt + 1
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.id, j.attempt, j.payload, j.group_key
), lease AS (
    INSERT INTO qchaos.leases (job_id, token, worker, lease_until)
    SELECT id, gen_random_uuid(), :worker,
           clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
    FROM claimed
    ON CONFLICT (job_id) DO UPDATE
        SET token = excluded.token, worker = excluded.worker, lease_until = excluded.lease_until
    RETURNING job_id, token, lease_until
)
SELECT c.id AS job_id,
       l.token::text AS token,
       (extract(epoch FROM l.lease_until) * 1000)::float8 AS lease_until_ms,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
       c.attempt,
       c.id::text AS op_key,
       c.payload,
       c.group_key
FROM claimed c JOIN lease l ON l.job_id = c.id;

-- name: complete
DELETE FROM qchaos.leases
WHERE job_id = :job_id::bigint AND token = :token::uuid
RETURNING job_id;
UPDATE qchaos.jobs
SET state = 'done'
WHERE id = :job_id::bigint AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.leases
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE job_id = :job_id::bigint AND token = :token::uuid
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
DELETE FROM qchaos.leases
WHERE job_id = :job_id::bigint AND token = :token::uuid
RETURNING job_id;
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    last_error = :error
WHERE id = :job_id::bigint AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
WITH expired AS (
    SELECT job_id, token
    FROM qchaos.leases
    WHERE lease_until < now()
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM qchaos.leases l
    USING expired e
    WHERE l.job_id = e.job_id
    RETURNING l.job_id, l.token
), back AS (
    UPDATE qchaos.jobs j
    SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
        last_error = CASE WHEN j.attempt >= j.max_attempts
                          THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END
    FROM gone g
    WHERE j.id = g.job_id AND j.state = 'inflight'
    RETURNING j.id, j.state, g.token
)
SELECT id AS job_id, token::text AS token, state,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
FROM back;

-- name: snapshot
SELECT j.id AS job_id, j.state, j.attempt, l.token::text AS token, j.last_error AS error
FROM qchaos.jobs j LEFT JOIN qchaos.leases l ON l.job_id = j.id
ORDER BY j.id;

-- name: monitor
SELECT count(*) FILTER (WHERE j.state = 'ready') AS ready,
       count(*) FILTER (WHERE j.state = 'inflight') AS inflight,
       count(*) FILTER (WHERE j.state = 'inflight' AND l.lease_until < now()) AS expired,
       count(*) FILTER (WHERE j.state = 'dead') AS dead,
       count(*) FILTER (WHERE j.state = 'done') AS done,
       coalesce((extract(epoch FROM now() - min(j.run_after)
                 FILTER (WHERE j.state = 'ready' AND j.run_after <= now())) * 1000)::bigint, 0)
           AS oldest_ready_age_ms
FROM qchaos.jobs j LEFT JOIN qchaos.leases l ON l.job_id = j.id;

-- name: monitor_live
SELECT (SELECT count(*) FROM qchaos.jobs WHERE state = 'ready') AS ready,
       (SELECT count(*) FROM qchaos.leases) AS inflight,
       (SELECT count(*) FROM qchaos.leases WHERE lease_until < now()) AS expired,
       (SELECT count(*) FROM qchaos.jobs WHERE state = 'dead') AS dead,
       coalesce((extract(epoch FROM now() - (SELECT min(run_after) FROM qchaos.jobs
                                              WHERE state = 'ready' AND run_after <= now()))
                 * 1000)::bigint, 0) AS oldest_ready_age_ms;
