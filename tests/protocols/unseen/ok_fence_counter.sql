-- Job queue fenced by a per-row counter instead of a random token.  Every
-- transition of a job (claim, complete, fail, reap) is ONE UPDATE that adds
-- 1 to jobs.fence; the claim hands the new value out as the token, and
-- complete / renew / fail only match "id = :job_id AND fence = :token".
-- Since every change of owner or state bumps the counter, an equal counter
-- means nothing happened to the row since that claim: the job is still in
-- flight under that claim (no separate state test is needed).  Each UPDATE
-- runs as one statement under READ COMMITTED: when the row changed under
-- it, PostgreSQL re-evaluates the WHERE on the newest version (EvalPlanQual),
-- whose counter no longer matches.  The renew extends the lease and leaves
-- the counter alone.  The reaper is a plain UPDATE (no SKIP LOCKED): it waits
-- for a row held by a complete / renew and then re-checks state and lease on
-- the newest version; it holds the row while it bumps the counter by exactly
-- 1, so the token it took away is fence - 1.  The claim locks with
-- FOR NO KEY UPDATE SKIP LOCKED (the UPDATE changes no key column).
-- engine: postgres
-- model: lease
-- description: per-row fence counter as the token (bumped by every transition), plain UPDATE reaper

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.jobs;
CREATE TABLE qchaos.jobs (
    id           bigserial PRIMARY KEY,
    state        text NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'done', 'dead')),
    run_after    timestamptz NOT NULL DEFAULT now(),
    attempt      int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    fence        bigint NOT NULL DEFAULT 0,
    lease_until  timestamptz,
    locked_by    text,
    payload      text,
    group_key    text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs;

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after)
VALUES (:payload, :group_key, :max_attempts::int,
        clock_timestamp() + :delay_ms::int * interval '1 millisecond')
RETURNING id AS job_id;

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= clock_timestamp()
    ORDER BY run_after, id
    LIMIT :batch::int
    FOR NO KEY UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    fence = j.fence + 1,
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + :lease_ms::int * interval '1 millisecond',
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.fence::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          'job-' || j.id AS op_key,
          j.payload,
          j.group_key;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', fence = fence + 1, lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND fence = :token::bigint
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + :lease_ms::int * interval '1 millisecond'
WHERE id = :job_id::bigint AND fence = :token::bigint
RETURNING fence::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    fence = fence + 1,
    run_after = clock_timestamp() + :delay_ms::int * interval '1 millisecond',
    lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND fence = :token::bigint
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN attempt >= max_attempts
                      THEN 'lease expired on attempt ' || attempt ELSE last_error END,
    fence = fence + 1,
    lease_until = NULL, locked_by = NULL
WHERE state = 'inflight' AND lease_until < clock_timestamp()
RETURNING id AS job_id, (fence - 1)::text AS token, state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: snapshot
SELECT id AS job_id, state, attempt, fence::text AS token, last_error AS error
FROM qchaos.jobs
ORDER BY id;

-- name: monitor
SELECT count(*) FILTER (WHERE state = 'ready') AS ready,
       count(*) FILTER (WHERE state = 'inflight') AS inflight,
       count(*) FILTER (WHERE state = 'inflight' AND lease_until < now()) AS expired,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       count(*) FILTER (WHERE state = 'done') AS done,
       coalesce((extract(epoch FROM now() - min(run_after)
                 FILTER (WHERE state = 'ready' AND run_after <= now())) * 1000)::bigint, 0)
           AS oldest_ready_age_ms
FROM qchaos.jobs;

-- name: server_pid
SELECT pg_backend_pid() AS pid;

-- name: kill_session
SELECT pg_terminate_backend(:pid::int) AS killed;
