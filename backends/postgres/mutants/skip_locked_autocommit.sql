-- qchaos MUTANT: SELECT ... FOR UPDATE SKIP LOCKED in autocommit, then a separate UPDATE
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/default.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT row lock released before the update (autocommit)
-- expect: exclusive_claim
-- scenario: scenarios/gate/contention.ini
-- base: ../skip_locked.sql

-- name: claim
-- autocommit: yes
-- The bug: in autocommit the SELECT's row lock ends with the SELECT, so the
-- UPDATE by id runs unprotected (shared/seeds/postgres-skip-locked.txt,
-- "SKIP LOCKED makes no sense without a transaction").
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
ORDER BY run_after, id
LIMIT 1
FOR UPDATE SKIP LOCKED;
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
