-- qchaos MUTANT: reap by id after a separate read (the rescuer race)
-- Must be caught by: double_complete, acked_durable, no_early_reap.  Exposed by: scenarios/cases/c09_rescuer.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT reaper reads expired leases, sleeps, then updates them by id alone
-- expect: double_complete, acked_durable, no_early_reap
-- scenario: scenarios/cases/c09_rescuer.ini
-- base: ../skip_locked.sql

-- name: reap
-- The bug (shared/cases.md C09): the rescuer reads the stuck rows, and later
-- updates them by id alone.  A completion that commits in between is
-- overwritten and the job runs again.  pg_sleep widens the window so the
-- race shows in every run.
SELECT id AS job_id, token::text AS token
FROM qchaos.jobs
WHERE state = 'inflight' AND lease_until < now()
ORDER BY lease_until
LIMIT 1;
SELECT pg_sleep(0.3) AS slept, :job_id::bigint AS job_id;
UPDATE qchaos.jobs
SET state = 'ready', token = NULL, lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint
RETURNING id AS job_id, :token::text AS token, state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
