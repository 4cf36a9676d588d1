-- qchaos MUTANT: claim read from a REPEATABLE READ snapshot taken before the lock (C01)
-- Must be caught by: effects_once, exclusive_claim.  Exposed by: scenarios/cases/c01_snapshot_claim.ini.
-- The node-pg-jobs claim (shared/cases.md C01), transaction model: the
-- claim's transaction runs at REPEATABLE READ, so its snapshot is taken by
-- its first statement; it then picks the oldest job that snapshot shows as
-- ready and takes the job's advisory transaction lock as the only guard.
-- The job row is not touched until complete.  A job another worker
-- completed after the snapshot still looks ready to it, and the other
-- worker's lock went with its commit, so the job is claimed and run again;
-- only the final UPDATE notices (40001 could not serialize access), after
-- the effect.  The pg_sleep stands for the pause between the snapshot and
-- the lock in the field report, so the race shows up in every run.
-- engine: postgres
-- model: transaction
-- description: MUTANT claim from a snapshot older than its lock (C01)
-- expect: effects_once, exclusive_claim
-- scenario: scenarios/cases/c01_snapshot_claim.ini

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
    token        uuid,
    lease_until  timestamptz,
    locked_by    text,
    payload      text,
    group_key    text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 200,
        autovacuum_vacuum_cost_delay = 0, fillfactor = 70);
-- Partial index in the exact shape of the claim: done rows never enter it.
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs;

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000.0))
RETURNING id AS job_id;

-- name: claim
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
-- The snapshot is taken here, before any lock.
SELECT pg_sleep(0.02) AS paused;
-- Candidates first (LIMIT in a subquery), so the lock function runs on the
-- candidates in order and stops at the first job it can lock.
SELECT c.id AS job_id,
       gen_random_uuid()::text AS token,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
       c.attempt + 1 AS attempt,
       c.id::text AS op_key,
       c.payload,
       c.group_key
FROM (SELECT id, attempt, payload, group_key
      FROM qchaos.jobs
      WHERE state = 'ready' AND run_after <= now()
      ORDER BY run_after, id
      LIMIT 64) c
WHERE pg_try_advisory_xact_lock(c.id)
LIMIT 1;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', attempt = attempt + 1, token = :token::uuid
WHERE id = :job_id::bigint
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt + 1 >= max_attempts THEN 'dead' ELSE 'ready' END,
    attempt = attempt + 1,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    last_error = :error
WHERE id = :job_id::bigint
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: snapshot
SELECT id AS job_id, state, attempt, token::text AS token, last_error AS error
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
