-- qchaos MUTANT: claim as SELECT ... LIMIT 1, then a separate UPDATE by id (no lock)
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/default.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT select-then-update claim without a row lock
-- expect: exclusive_claim
-- scenario: scenarios/gate/contention.ini
-- base: ../skip_locked.sql

-- name: claim
-- The bug: read a ready job without any lock, then update it by id.  Two
-- workers that read the same row both "win": the second UPDATE waits for the
-- first to commit and then overwrites its token and lease.
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
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
