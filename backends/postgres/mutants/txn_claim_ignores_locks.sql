-- qchaos MUTANT: transaction-model claim that reads without honouring the row lock
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/txn.ini.
-- The claim picks the oldest ready job with a plain SELECT (no FOR UPDATE,
-- no SKIP LOCKED) and leaves the row untouched until complete, so two
-- workers whose claims run close together both get the same job and both
-- work on it inside their open transactions.  The second complete waits for
-- the first one's row lock, then finds the job done and changes no row, so
-- no double complete is recorded and an idempotent sink hides the second
-- effect: only the rule that two open claims of one job must not overlap
-- (issue 18, exclusive_claim's transaction-model rule) sees it.
-- engine: postgres
-- model: transaction
-- description: MUTANT transaction-model claim that reads without the row lock
-- expect: exclusive_claim
-- scenario: scenarios/txn.ini
-- base: ../skip_locked_txn.sql

-- name: claim
SELECT id AS job_id,
       gen_random_uuid()::text AS token,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
       attempt + 1 AS attempt,
       id::text AS op_key,
       payload,
       group_key
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
ORDER BY run_after, id
LIMIT :batch::int;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', attempt = attempt + 1, token = :token::uuid
WHERE id = :job_id::bigint AND state = 'ready'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt + 1 >= max_attempts THEN 'dead' ELSE 'ready' END,
    attempt = attempt + 1,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    last_error = :error
WHERE id = :job_id::bigint AND state = 'ready'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
