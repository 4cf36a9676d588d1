-- qchaos unseen protocol (BROKEN): FOR UPDATE without SKIP LOCKED, taken on
-- the candidate's id after an unlocked read, and no re-check.
-- Statement 1 reads the head of the queue without a lock; statement 2 locks
-- that row by id (FOR UPDATE, waits; under READ COMMITTED it returns the
-- latest version, but its WHERE only says id = ..., so nothing re-checks that
-- the row is still 'ready'); statement 3 updates it by id.  Two workers that
-- read the same head both claim it: the second waits for the first's commit
-- and then overwrites its token and lease.
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: unlocked pick, FOR UPDATE by id without state re-check
-- expect: exclusive_claim
-- base: ../../../backends/postgres/skip_locked.sql

-- name: claim
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
ORDER BY run_after, id
LIMIT 1;
SELECT id AS locked_id
FROM qchaos.jobs
WHERE id = :job_id::bigint
FOR UPDATE;
UPDATE qchaos.jobs
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
WHERE id = :job_id::bigint
RETURNING id AS job_id,
          token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          attempt,
          id::text AS op_key,
          payload,
          group_key,
          :batch::int AS asked;
