-- qchaos unseen protocol (BROKEN): the attempt counter is the fencing token,
-- and the reaper refunds the attempt of an expired lease ("a lease that ran
-- out is the worker's fault, not the job's": attempt = attempt - 1).
-- The next claim increments it back to the same number, so a reclaimed job
-- gets the token its stalled first owner still holds: that owner's
-- complete / renew / fail is accepted.  A job that crashes its worker is
-- also retried forever (the refund undoes every attempt).
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: token = attempt number, reaper refunds the attempt
-- expect: stale_token_rejected, bounded_failure
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
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.attempt::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND attempt = :token::int AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND attempt = :token::int AND state = 'inflight'
RETURNING attempt::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND attempt = :token::int AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
WITH expired AS (
    SELECT id, attempt
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = 'ready',
    attempt = greatest(j.attempt - 1, 0),
    lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.attempt::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: snapshot
SELECT id AS job_id, state, attempt,
       CASE WHEN state = 'inflight' THEN attempt::text END AS token, last_error AS error
FROM qchaos.jobs
ORDER BY id;
