-- qchaos MUTANT: the renew stamps the lease on the application's clock (C24)
-- Must be caught by: effects_once or no_early_reap.  Exposed by: scenarios/clock_skew.ini
-- (work longer than the renew period, in the gate battery; decision 1121).
-- shared/cases.md C24 again, on the renew alone: the claim grants its
-- lease on the server clock, as backends/postgres/skip_locked.sql does,
-- but the renew (the heartbeat a long job sends every lease/3) writes
-- lease_until from :client_now_ms, the worker's own clock.  A worker whose
-- clock is behind the database's by more than the lease turns its live
-- lease into one that has already run out with its first renew: the
-- reaper takes the job back while the owner works, another worker runs it
-- too, and a plain sink counts the effect twice; the renew's own answer
-- shows a lease already past (no_early_reap's short-lease rule).  Jobs
-- shorter than the renew period never renew and never show it.
-- engine: postgres
-- model: lease
-- description: MUTANT renew computes lease_until on the worker's (skewed) clock
-- expect: effects_once, no_early_reap
-- scenario: scenarios/clock_skew.ini
-- base: ../skip_locked.sql

-- name: renew
UPDATE qchaos.jobs
SET lease_until = to_timestamp((:client_now_ms::float8 + :lease_ms::int) / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
