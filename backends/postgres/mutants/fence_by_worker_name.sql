-- qchaos MUTANT: complete, renew and fail fenced by the worker's name
-- (locked_by = :worker) instead of the claim's token.  A team that stamps
-- locked_by with the host name and runs several worker threads per host
-- (a Sidekiq-style concurrency setting, one application server with N
-- threads) writes it this way: "only the worker that holds the job may
-- finish it".  A thread that stalled past its lease wakes after another
-- thread of the same host reclaimed the job, and its stale complete, renew
-- or fail matches the new claim's locked_by: accepted.  With a distinct
-- name per incarnation the fence happens to work, so only a scenario whose
-- threads share one name exposes it (scenarios/gate/stale_complete.ini and
-- stale_fail.ini: [policy] worker_name = host, decision 1115).
-- Must be caught by: stale_token_rejected.  Exposed by:
-- scenarios/gate/stale_complete.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT complete/renew/fail check locked_by = :worker, not the token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_complete.ini
-- base: ../skip_locked.sql

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND locked_by = :worker AND state = 'inflight'
  AND :token::text IS NOT NULL
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND locked_by = :worker AND state = 'inflight'
  AND :token::text IS NOT NULL
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND locked_by = :worker AND state = 'inflight'
  AND :token::text IS NOT NULL
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
