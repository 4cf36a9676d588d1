-- qchaos MUTANT: enqueue that stores some jobs as already done
-- Must be caught by: no_lost_jobs.  Exposed by: scenarios/kill_after_claim.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT about 1% of jobs are inserted done and never run
-- expect: no_lost_jobs
-- scenario: scenarios/kill_after_claim.ini
-- base: ../skip_locked.sql

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after, state)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000.0),
        CASE WHEN random() < 0.01 THEN 'done' ELSE 'ready' END)
RETURNING id AS job_id;
