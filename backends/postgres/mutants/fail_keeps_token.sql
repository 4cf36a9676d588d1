-- qchaos MUTANT: the fail keeps the token, and the next claim reuses it
-- Must be caught by: stale_token_rejected.  Exposed by:
-- scenarios/gate/stale_fail.ini ([faults] lost_ack_on_fail, in the gate
-- battery; decision 1124).
-- The fail gives the job back without clearing its token, and the claim
-- writes coalesce(token, gen_random_uuid()): a job that was failed once is
-- claimed again under the token of its previous attempt.  The reaper still
-- clears the token, so a stale request after a reap is refused; but the
-- old owner's retry of a fail whose answer it never got (a lost ack)
-- carries the very token the new owner now holds, and fails the new
-- owner's claim while it runs.
-- engine: postgres
-- model: lease
-- description: MUTANT fail keeps the token; claim reuses a kept token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_fail.ini
-- base: ../skip_locked.sql

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    FOR UPDATE SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = coalesce(j.token, gen_random_uuid()),
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

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
