-- qchaos MUTANT: renew without the token condition
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/stall_beyond_lease.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT renew checks the job id only
-- expect: stale_token_rejected
-- scenario: scenarios/stall_beyond_lease.ini
-- base: ../skip_locked.sql

-- name: renew
-- The bug: a stalled worker's heartbeat extends the lease of the job's new
-- owner (and is told it still holds it).
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND state = 'inflight' AND :token::text IS NOT NULL
RETURNING :token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
