-- qchaos protocol: skip_locked.sql with a transactional outbox's
-- deduplication (shared/cases.md C23, NServiceBus's outbox as the fix
-- has it).  The broker may hold several physical copies of one message
-- ([workload] copies: each its own job, all with one message_id).  Before
-- its handler runs, a worker's copy inserts the message's outbox record
-- (INSERT ... ON CONFLICT DO NOTHING, keyed by message_id): the copy whose
-- insert took the key owns the message and runs; a copy that finds another
-- job's record is a duplicate, completed without its handler.  The unique
-- key is the lock: two concurrent copies cannot both insert it, whatever
-- the timing, so the check and the act are one statement.  The record
-- names the owning job, so that the owner's own redelivery (its worker
-- died after the check, the reaper gave the job back) runs again, as any
-- redelivered job does (effects_once judges that), instead of leaving the
-- message without its handler forever.  The mutant that checks first and
-- inserts at complete, as NServiceBus did, is
-- mutants/outbox_check_then_act.sql.
-- engine: postgres
-- model: lease
-- base: skip_locked.sql
-- description: SKIP LOCKED queue with an outbox: the dedup inserts the message's record before the handler (C23)
-- tested: qchaos CI, PostgreSQL 15: scenarios/cases/c23_outbox_copies.ini (message_once PASS)

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.outbox;
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
    message_id   uuid NOT NULL,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 200,
        autovacuum_vacuum_cost_delay = 0, fillfactor = 70);
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';
CREATE INDEX jobs_dead ON qchaos.jobs (id) WHERE state = 'dead';
-- One record per logical message: the key every copy's dedup races for.
CREATE TABLE qchaos.outbox (
    message_id   uuid PRIMARY KEY,
    job_id       bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- name: teardown
DROP TABLE IF EXISTS qchaos.outbox;
DROP TABLE IF EXISTS qchaos.jobs;

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after, message_id)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000.0), :message_id::uuid)
RETURNING id AS job_id;

-- name: claim
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
          j.group_key,
          j.message_id::text AS message_id;

-- name: dedup
-- Insert first, run only if this copy holds the record: a conflicting
-- insert waits for the other copy's to commit, then finds the key taken
-- and returns no row (run false).  The DO UPDATE touches nothing but lets
-- the record's own job through again (its redelivery).
INSERT INTO qchaos.outbox AS o (message_id, job_id)
VALUES (:message_id::uuid, :job_id::bigint)
ON CONFLICT (message_id) DO UPDATE SET job_id = o.job_id
    WHERE o.job_id = EXCLUDED.job_id
RETURNING true AS run;
