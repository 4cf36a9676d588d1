-- qchaos MUTANT: fail without an attempt limit
-- Must be caught by: bounded_failure.  Exposed by: scenarios/poison.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT fail always requeues, never dead-letters
-- expect: bounded_failure
-- scenario: scenarios/poison.ini
-- base: ../skip_locked.sql

-- name: fail
-- The bug: a failing job is requeued forever; poison jobs never reach dead.
UPDATE qchaos.jobs
SET state = 'ready',
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
