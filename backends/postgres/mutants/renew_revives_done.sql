-- qchaos MUTANT: the renew matches the job by id and token only and sets
-- it in flight again ("a heartbeat marks the job running").  complete
-- leaves the token on the done row, so a renew that arrives just after the
-- complete committed (a heartbeat thread whose timer fired as the handler
-- returned) turns the done job back into an in-flight one; its lease runs
-- out, the reaper returns it and it runs a second time.  Found by a
-- breaker's unseen protocol (decision 1106): no scenario sent a renew
-- after its own complete before the fault late_renew.
-- Must be caught by: double_complete, exclusive_claim, stale_token_rejected.  Exposed by:
-- scenarios/gate/late_renew.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT renew by id and token without the state check revives done jobs
-- expect: double_complete, exclusive_claim, stale_token_rejected
-- scenario: scenarios/gate/late_renew.ini
-- base: ../skip_locked.sql

-- name: renew
UPDATE qchaos.jobs
SET state = 'inflight',
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
