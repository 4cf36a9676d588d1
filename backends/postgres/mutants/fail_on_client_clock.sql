-- qchaos MUTANT: the fail sets the retry time on the application's clock (C24)
-- Must be caught by: retry_delay.  Exposed by: scenarios/clock_skew.ini
-- (poison jobs on skewed workers, in the gate battery; decision 1121).
-- shared/cases.md C24 on the fail step: run_after = the worker's clock
-- (:client_now_ms) + the retry delay, while the claim compares run_after
-- with the server's now().  A worker whose clock is behind the database's
-- by more than the delay writes a retry time already in the past: the job
-- is claimed again at once, before its delay has passed.
-- engine: postgres
-- model: lease
-- description: MUTANT fail computes run_after on the worker's (skewed) clock
-- expect: retry_delay
-- scenario: scenarios/clock_skew.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = to_timestamp((:client_now_ms::float8 + :delay_ms::int) / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
