-- qchaos MUTANT: claim takes any ready job, due or not (a retried job runs again at once)
-- Must be caught by: retry_delay.  Exposed by: scenarios/poison.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT claim without "run_after <= now()": a failed job is retried before its delay
-- expect: retry_delay
-- scenario: scenarios/poison.ini
-- base: ../skip_locked.sql

-- name: claim
-- The bug: the claim's filter lost its due-time condition, so the retry
-- delay that fail writes into run_after is never honoured (and a job
-- scheduled for later runs now).
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready'
    ORDER BY run_after, id
    FOR UPDATE SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;
