-- qchaos test protocol: skip_locked.sql whose complete, renew and fail also
-- fence on the worker that holds the lease (issue 18: :worker was bound in
-- claim only, so such a protocol stopped with exit 2).  The claim stores
-- :worker ("w<worker_id>.<incarnation>") in locked_by; complete and fail
-- check it, renew checks it rebuilt from :worker_id and :incarnation, and
-- the reaper reads :lease_ms (bound in every step).  A correct protocol:
-- every checker must pass on it.
-- note: used by tests/check_protocol.c and tests/check_e2e.c
-- engine: postgres
-- model: lease
-- description: skip_locked.sql with complete / renew / fail fenced on the lease holder
-- base: ../../backends/postgres/skip_locked.sql

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
  AND locked_by = :worker
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
  AND locked_by = 'w' || :worker_id::text || '.' || :incarnation::text
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= least(max_attempts, :max_attempts::int) THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
  AND locked_by = :worker
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
-- :lease_ms is bound here too: a lease may be reaped only once it has run
-- out, and never sooner than one lease after it was taken.
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < now()
      AND lease_until - make_interval(secs => :lease_ms::int / 1000.0) < now()
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
