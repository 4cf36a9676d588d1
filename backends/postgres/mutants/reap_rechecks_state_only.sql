-- qchaos MUTANT: reaper reads the expired leases, then writes re-checking only the state (breaker3 b9)
-- Must be caught by: no_early_reap, or exclusive_claim (the renewed lease
-- taken back while live, the job claimed again beside it: CI at load 10,
-- seed 2, the owner's renew was sent after its first lease had run out,
-- which no_early_reap does not protect; decision 998).  Exposed by:
-- scenarios/scripts/reap_renew_race.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reap: unlocked read of expired ids, then UPDATE of those still in flight (no lease re-check)
-- expect: no_early_reap,exclusive_claim
-- scenario: scenarios/scripts/reap_renew_race.ini
-- base: ../skip_locked.sql

-- name: reap
-- The bug: between the read and the write the owner may renew its
-- expired, not yet reaped lease (its token still holds); the write then
-- takes back a lease just extended, and the owner's complete is refused.
-- Unlike reap_read_then_write it re-checks state = 'inflight', so a job
-- completed in the window stays done (C09's script passes it): only a
-- renew in the window shows the bug.
SELECT array_agg(id)::text AS ids FROM qchaos.jobs
WHERE state = 'inflight' AND lease_until < clock_timestamp()
HAVING count(*) > 0;
WITH old AS (
    SELECT id, token FROM qchaos.jobs
    WHERE id = ANY (:ids::bigint[]) AND state = 'inflight'
    FOR UPDATE
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM old WHERE j.id = old.id
RETURNING j.id AS job_id, old.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
