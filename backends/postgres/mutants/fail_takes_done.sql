-- qchaos MUTANT: fail checks the token but not the state
-- Must be caught by: effects_once.  Exposed by: scenarios/network_lost_ack_fail.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT fail requeues a job whose complete already committed
-- expect: effects_once
-- scenario: scenarios/network_lost_ack_fail.ini
-- base: ../skip_locked.sql

-- name: fail
-- The bug: complete keeps the token on the done row, and fail matches on
-- the id and token only.  A worker that lost the answer to its committed
-- complete (the proxy dropped it) and calls fail (delayed_job's reaction,
-- shared/cases.md C06) puts the done job back to ready: it runs again, a
-- second applied effect with a plain sink.
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
