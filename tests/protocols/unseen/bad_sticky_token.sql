-- qchaos unseen protocol (BROKEN): sticky token.
-- The reaper keeps the token on the row it puts back ("so we can see who
-- had it"), and the claim only draws a new token when the row has none
-- (coalesce: "keep the token stable across retries, the handler uses it as
-- an idempotency key").  A job reaped and reclaimed therefore carries the
-- same token as before: the stalled first owner's complete / renew / fail
-- matches and is accepted while the job belongs to the new owner.
-- complete, renew and fail check id, token and state as in the base.
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: reaper keeps the token, claim reuses a non-null token
-- expect: stale_token_rejected
-- base: ../../../backends/postgres/skip_locked.sql

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

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
