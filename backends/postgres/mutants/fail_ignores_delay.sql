-- qchaos MUTANT: fail puts the job back due at once, ignoring the retry delay asked for (breaker3 b3)
-- Must be caught by: retry_delay.  Exposed by: scenarios/scripts/c04_aba.ini (and poison.ini).
-- engine: postgres
-- model: lease
-- description: MUTANT fail never reads :delay_ms: run_after = clock_timestamp(), a retry at once
-- expect: retry_delay
-- scenario: scenarios/scripts/c04_aba.ini
-- base: ../skip_locked.sql

-- name: fail
-- The bug: the worker asks for a retry delay and the queue drops it (a
-- hot loop on a poison job).  Until decision 960 a fail that did not read
-- :delay_ms was taken to have promised no delay, and retry_delay said
-- INCONCLUSIVE; the delay asked for is now the contract.
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp(),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
