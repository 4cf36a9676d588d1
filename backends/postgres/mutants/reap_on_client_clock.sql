-- qchaos MUTANT: the reaper judges expiry on its own host's clock (C24)
-- Must be caught by: no_early_reap.  Exposed by: scenarios/clock_skew_reaper.ini (in the gate battery).
-- shared/cases.md C24 (db-scheduler #433): dead-execution detection runs on
-- each node and compares the lease with that node's clock.now(); a node
-- whose clock runs ahead sees live executions as dead and reschedules them.
-- Here claim and renew keep leases on the database clock (skip_locked.sql),
-- but the reap compares lease_until with :client_now_ms, the reaper's
-- application clock ([faults] reaper_skew_ms off the database's).  A
-- reaper 3 s ahead takes back leases of 2 s that have 1 to 3 s left: the
-- reap's own server time (now_ms) is before the lease_until it took away.
-- engine: postgres
-- model: lease
-- description: MUTANT reap compares lease_until with the reaper's (skewed) client clock
-- expect: no_early_reap
-- scenario: scenarios/clock_skew_reaper.ini
-- base: ../skip_locked.sql

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight'
      AND lease_until < to_timestamp(:client_now_ms::float8 / 1000.0)
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
