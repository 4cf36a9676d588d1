-- qchaos unseen protocol (BROKEN): renew succeeds for a finished job.
-- complete (base) leaves the token on the done row; renew matches on id and
-- token only and re-asserts the running state ("a heartbeat marks the job
-- running"): a renew that arrives after the job's complete committed (a
-- heartbeat thread racing the complete, or a renew retried after a lost
-- answer) turns the done job back into an in-flight one, whose lease then
-- runs out: the reaper returns it and it runs a second time.
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: renew by id+token without state check revives done jobs
-- expect: effects_once, double_complete
-- note: the gate passed it (seed 1): no scenario sent a renew after its own complete;
-- caught since decision 1106 by gate/late_renew.ini (double_complete, exclusive_claim)
-- base: ../../../backends/postgres/skip_locked.sql

-- name: renew
UPDATE qchaos.jobs
SET state = 'inflight',
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
