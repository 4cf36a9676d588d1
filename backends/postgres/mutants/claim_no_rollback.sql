-- qchaos MUTANT: a claim that manages its own transaction and does not roll back on error (C20)
-- Must be caught by: worker_progress.  Exposed by: scenarios/cases/c20_wedged.ini (in the gate battery).
-- shared/cases.md C20 (Laravel DatabaseQueue::pop, PR 22394): pop began a
-- transaction, and when a statement in it threw (a deadlock, a lock wait
-- timeout) nothing rolled back; the worker caught the exception and went on
-- on the same connection, inside the never-ended transaction.  Here the
-- claim step is autocommit (it sends its own BEGIN / COMMIT): it takes the
-- bookkeeping row with FOR UPDATE NOWAIT (a stand-in for the deadlock or
-- the timeout: it fails whenever two claims overlap), COMMITs, then claims.
-- When the NOWAIT fails, the session is left "idle in transaction
-- (aborted)": every later request of that worker fails with 25P02 and the
-- worker never works again, while one surviving worker finishes the queue
-- (the judged safety and liveness checkers see nothing wrong).
-- engine: postgres
-- model: lease
-- description: MUTANT claim BEGINs its own transaction and leaves it open (aborted) after an error
-- expect: worker_progress
-- scenario: scenarios/cases/c20_wedged.ini
-- base: ../skip_locked.sql

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
-- monitor_live (the base's) counts dead jobs through it (issue 16).
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';
-- The bookkeeping row the claim takes (Laravel's pop did its own reads
-- and writes inside the transaction; here one row stands for them).
CREATE TABLE IF NOT EXISTS qchaos.queue_meta (id int PRIMARY KEY, claims bigint NOT NULL DEFAULT 0);
DELETE FROM qchaos.queue_meta;
INSERT INTO qchaos.queue_meta (id) VALUES (1);

-- name: teardown
DROP TABLE IF EXISTS qchaos.jobs;
DROP TABLE IF EXISTS qchaos.queue_meta;

-- name: claim
-- autocommit: yes
BEGIN;
SELECT id AS meta_id FROM qchaos.queue_meta WHERE id = 1 FOR UPDATE NOWAIT;
UPDATE qchaos.queue_meta SET claims = claims + 1 WHERE id = :meta_id::int;
COMMIT;
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    FOR UPDATE SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;
