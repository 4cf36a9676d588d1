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
-- base: ../skip_locked_txn.sql

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
