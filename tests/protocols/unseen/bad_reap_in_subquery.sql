-- qchaos unseen protocol (BROKEN): the everyday one-statement reaper,
-- UPDATE ... WHERE id IN (SELECT id ... expired), with no lock on the read
-- and no re-check in the UPDATE's own WHERE.  The subquery reads the
-- expired leases from the statement's snapshot; the UPDATE then waits for
-- any row another session holds (a complete or renew in progress) and, under
-- READ COMMITTED, writes the newest version of the row without re-checking
-- that it is still in flight and still expired: the join's other side is
-- the old row version.  A job completed (or renewed) in that window is put
-- back to ready: it runs again, or its live lease is taken away.
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: reaper UPDATE ... WHERE id IN (unlocked expired read), no re-check
-- expect: no_early_reap, effects_once, double_complete
-- note: the gate passed it (seed 1): the race is inside one statement, no script point reached it;
-- caught since decision 1105 by scripts/reap_snapshot_race.ini (double_complete)
-- base: ../../../backends/postgres/skip_locked.sql

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
