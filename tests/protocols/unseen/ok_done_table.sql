-- qchaos unseen protocol (correct): complete moves the row to a done table.
-- complete is one statement: DELETE ... WHERE id AND token AND state
-- 'inflight' RETURNING, feeding an INSERT into qchaos.jobs_done.  The
-- snapshot reads qchaos.jobs only, so a finished job is absent from it
-- (header "missing: done").  Dead jobs stay in qchaos.jobs.
-- engine: postgres
-- model: lease
-- description: UNSEEN correct: complete moves the finished row to qchaos.jobs_done
-- missing: done
-- base: ../../../backends/postgres/skip_locked.sql

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.jobs_done;
DROP TABLE IF EXISTS qchaos.jobs;
CREATE TABLE qchaos.jobs (
    id           bigserial PRIMARY KEY,
    state        text NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'dead')),
    run_after    timestamptz NOT NULL DEFAULT now(),
    attempt      int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    token        uuid,
    lease_until  timestamptz,
    locked_by    text,
    payload      text,
    group_key    text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';
CREATE TABLE qchaos.jobs_done (
    id        bigint PRIMARY KEY,
    attempt   int NOT NULL,
    token     uuid NOT NULL,
    worker    text,
    payload   text,
    done_at   timestamptz NOT NULL
);

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs_done;
DROP TABLE IF EXISTS qchaos.jobs;

-- name: complete
WITH moved AS (
    DELETE FROM qchaos.jobs
    WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
    RETURNING id, attempt, token, locked_by, payload
)
INSERT INTO qchaos.jobs_done (id, attempt, token, worker, payload, done_at)
SELECT id, attempt, token, locked_by, payload, clock_timestamp()
FROM moved
RETURNING (extract(epoch FROM done_at) * 1000)::float8 AS now_ms;

-- name: monitor
SELECT count(*) FILTER (WHERE state = 'ready') AS ready,
       count(*) FILTER (WHERE state = 'inflight') AS inflight,
       count(*) FILTER (WHERE state = 'inflight' AND lease_until < now()) AS expired,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       (SELECT count(*) FROM qchaos.jobs_done) AS done,
       coalesce((extract(epoch FROM now() - min(run_after)
                 FILTER (WHERE state = 'ready' AND run_after <= now())) * 1000)::bigint, 0)
           AS oldest_ready_age_ms
FROM qchaos.jobs;
