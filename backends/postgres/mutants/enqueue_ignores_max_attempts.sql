-- qchaos MUTANT: enqueue that ignores :max_attempts (the table's default of 3 applies)
-- Must be caught by: no_lost_jobs.  Exposed by: scenarios/max_attempts.ini.
-- Issue 18: the scenario asks for 5 attempts; the queue dead-letters a
-- crashing job after its own 3.  qchaos says at load time that the
-- protocol never reads :max_attempts, and no_lost_jobs finds the job dead
-- after 3 claims of 5 with no worker having failed it.
-- engine: postgres
-- model: lease
-- description: MUTANT enqueue ignores :max_attempts: jobs dead-letter at the table's default
-- expect: no_lost_jobs
-- scenario: scenarios/max_attempts.ini
-- base: ../skip_locked.sql

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, run_after)
VALUES (:payload, :group_key, now() + make_interval(secs => :delay_ms::int / 1000.0))
RETURNING id AS job_id;
