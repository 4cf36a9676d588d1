-- qchaos MUTANT: renew checks the token in one statement, then extends the lease by id alone (breaker3 b5)
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/scripts/renew_toctou.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT renew: unlocked token check, then UPDATE by id returning the row's token
-- expect: stale_token_rejected
-- scenario: scenarios/scripts/renew_toctou.ini
-- base: ../skip_locked.sql

-- name: renew
-- The bug: the check takes no row lock, so between it and the UPDATE the
-- job can be reaped and claimed by another worker; the UPDATE then extends
-- the new owner's lease and hands the stale worker the NEW owner's token,
-- with which its later renews and its complete are accepted.
SELECT id AS job_id FROM qchaos.jobs
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight';
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
