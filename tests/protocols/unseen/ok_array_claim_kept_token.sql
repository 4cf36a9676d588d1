-- Job queue: the claim is UPDATE ... WHERE id = ANY(ARRAY(SELECT ... FOR
-- UPDATE SKIP LOCKED LIMIT n)); the token is a fresh uuid per claim that
-- nothing ever clears: complete, renew and fail require id AND state
-- 'inflight' AND token, the reaper returns expired leases (rows it locks
-- with SKIP LOCKED, so an owner's concurrent complete or renew is either
-- waited out by the owner or skipped by the reaper, and the locked row is
-- re-checked on its newest version) and keeps the token as a record.  A
-- stale owner's request meets either a row not 'inflight' or one with
-- another claim's token.
-- engine: postgres
-- model: lease
-- description: ARRAY(...) SKIP LOCKED claim, token kept after reap/complete, every step checks state + token

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
-- Dead jobs are few; this index lets monitor_live count them without
-- reading the done rows (issue 16).  state is already in the other
-- indexes' predicates, so it costs no HOT update.
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs;

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000.0))
RETURNING id AS job_id;

-- name: claim
-- The ids are locked and collected by an ARRAY(...) sub-select, an InitPlan
-- that runs once before the UPDATE (unlike IN (subquery), which the planner
-- may turn into a join and re-scan): at most :batch rows, each locked by
-- this statement before it is written.
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
WHERE j.id = ANY (ARRAY(
          SELECT id
          FROM qchaos.jobs
          WHERE state = 'ready' AND run_after <= now()
          ORDER BY run_after, id
          LIMIT :batch::int
          FOR UPDATE SKIP LOCKED))
  AND j.state = 'ready'
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND state = 'inflight' AND token = :token::uuid
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND state = 'inflight' AND token = :token::uuid
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND state = 'inflight' AND token = :token::uuid
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
-- The token is kept (who held the job last); every step that takes a
-- token also requires state 'inflight', and every claim draws a new one.
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN attempt >= max_attempts
                      THEN 'lease expired on attempt ' || attempt ELSE last_error END,
    lease_until = NULL, locked_by = NULL
WHERE id IN (SELECT id FROM qchaos.jobs
             WHERE state = 'inflight' AND lease_until < now()
             FOR UPDATE SKIP LOCKED)
RETURNING id AS job_id, token::text AS token, state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

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

-- name: monitor_live
-- The live states only, each through its partial index: O(live rows),
-- whatever the number of done rows (issue 16).  The harness samples this
-- every monitor_interval_ms and the full monitor above (which counts done
-- by reading the whole table) every monitor_full_interval_ms.
SELECT (SELECT count(*) FROM qchaos.jobs WHERE state = 'ready') AS ready,
       (SELECT count(*) FROM qchaos.jobs WHERE state = 'inflight') AS inflight,
       (SELECT count(*) FROM qchaos.jobs
        WHERE state = 'inflight' AND lease_until < now()) AS expired,
       (SELECT count(*) FROM qchaos.jobs WHERE state = 'dead') AS dead,
       coalesce((extract(epoch FROM now() - (SELECT min(run_after) FROM qchaos.jobs
                                              WHERE state = 'ready' AND run_after <= now()))
                 * 1000)::bigint, 0) AS oldest_ready_age_ms;

-- name: server_pid
SELECT pg_backend_pid() AS pid;

-- name: kill_session
SELECT pg_terminate_backend(:pid::int) AS killed;
