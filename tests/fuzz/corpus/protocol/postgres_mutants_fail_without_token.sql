-- qchaos MUTANT: fail / release without the token condition
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/stall_then_fail.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT fail checks the job id and state only
-- expect: stale_token_rejected
-- scenario: scenarios/stall_then_fail.ini
-- base: ../skip_locked.sql

-- name: fail
-- The bug: a worker that lost its lease can still fail (requeue) the job,
-- taking it away from its new owner.
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND state = 'inflight' AND :token::text IS NOT NULL
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
