-- qchaos MUTANT: the everyday one-statement reaper, UPDATE ... FROM (a
-- plain SELECT of the expired leases) WHERE id matches, with no lock on the
-- read and no re-check in the UPDATE's own WHERE.  The subquery reads the
-- expired leases from the statement's snapshot; the UPDATE then waits for
-- a row another session holds (a complete or renew not yet committed) and,
-- under READ COMMITTED, re-checks only its own WHERE (j.id = e.id) against
-- the newest version: the subquery's side stays the old one.  A job
-- completed in that window is put back to ready and runs again.  The race
-- is inside one statement, so no reap.1 reaches it; the complete's own
-- transaction is held before its COMMIT instead (decision 1105).
-- Must be caught by: double_complete.  Exposed by:
-- scenarios/scripts/reap_snapshot_race.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper updates by id from an unlocked read of expired leases, no re-check
-- expect: double_complete
-- scenario: scenarios/scripts/reap_snapshot_race.ini
-- base: ../skip_locked.sql

-- name: reap
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM (SELECT id, token
      FROM qchaos.jobs
      WHERE state = 'inflight' AND lease_until < now()) e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
