-- qchaos protocol: PostgreSQL job queue with per-group FIFO and exclusivity
-- (Service Broker conversation group semantics, shared/seeds/
-- sqlserver-service-broker-conversation-locks.txt: one reader per group at
-- a time, a group's messages in order).  An overlay of skip_locked.sql: its
-- setup adds an index on the group, its claim is per group; every other
-- step (token-checked complete/renew/fail, lease reaper) is the base's.
-- engine: postgres
-- model: lease
-- description: per-group FIFO claim (oldest unfinished job of an idle group only)
-- tested: qchaos CI, PostgreSQL 15: grouped.ini
-- base: skip_locked.sql

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
CREATE INDEX jobs_group ON qchaos.jobs (group_key, id) WHERE state IN ('ready', 'inflight');

-- name: claim
-- Group semantics (conversation group locks; shared/cases.md C14): a job of
-- a group is eligible only when it is its group's oldest unfinished job
-- (no older job of the group is ready or in flight) and no job of the group
-- is in flight.  A concurrent claimer that sees the oldest job locked skips
-- it, and every younger job of that group fails the "no older ready job"
-- test in its snapshot, so two workers never hold one group.  A job whose
-- older sibling is scheduled later waits for it, whatever its own run_after.
WITH picked AS (
    SELECT j.id
    FROM qchaos.jobs j
    WHERE j.state = 'ready' AND j.run_after <= now()
      AND (j.group_key IS NULL
           OR NOT EXISTS (SELECT 1 FROM qchaos.jobs o
                          WHERE o.group_key = j.group_key
                            AND (o.state = 'inflight'
                                 OR (o.state = 'ready' AND o.id < j.id))))
    ORDER BY j.run_after, j.id
    FOR UPDATE OF j SKIP LOCKED
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
