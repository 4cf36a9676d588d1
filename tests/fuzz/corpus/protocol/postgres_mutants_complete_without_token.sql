-- qchaos MUTANT: complete without the token condition
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/stall_beyond_lease.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT complete checks the job id and state only
-- expect: stale_token_rejected
-- scenario: scenarios/stall_beyond_lease.ini
-- base: ../skip_locked.sql

-- name: complete
-- The bug: any worker that once held the job can complete it, also after
-- the lease passed to someone else.
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND state = 'inflight' AND :token::text IS NOT NULL
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
