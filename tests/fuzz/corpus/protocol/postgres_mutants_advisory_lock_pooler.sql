-- qchaos MUTANT: session advisory lock as the only claim guard, behind PgBouncer in transaction mode
-- Must be caught by: exclusive_claim, double_complete.  Exposed by: scenarios/cases/c03_pooler.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT claim guarded by pg_try_advisory_lock only (session state lost in a transaction pooler)
-- expect: exclusive_claim, double_complete
-- scenario: scenarios/cases/c03_pooler.ini
-- base: ../skip_locked.sql

-- name: claim
-- autocommit: yes
-- The bug (shared/cases.md C03): the claim is a session-level advisory
-- lock.  Behind a transaction-mode pooler each statement may run on
-- another server session, so the lock protects nothing; the job is marked
-- by id without re-checking its state.
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now() AND pg_try_advisory_lock(id)
ORDER BY run_after, id
LIMIT 1;
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
          group_key;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          pg_advisory_unlock(id) AS unlocked;
