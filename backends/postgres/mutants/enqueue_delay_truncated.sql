-- qchaos MUTANT: the enqueue's delay truncated to whole seconds
-- Must be caught by: retry_delay.  Exposed by: scenarios/idle.ini (its
-- bursts are enqueued 700 ms ahead, in the gate battery; decision 1123).
-- The enqueue schedules a job :delay_ms ahead with an integer division,
-- :delay_ms::int / 1000 (the fail step is right): any delay under a second
-- becomes none, 1.7 s becomes 1 s.  A delayed job is claimed before it
-- falls due; retry_delay's enqueue rule proves it from the enqueue's send
-- time and the claim's answer.
-- engine: postgres
-- model: lease
-- description: MUTANT enqueue computes run_after with an integer division of :delay_ms
-- expect: retry_delay
-- scenario: scenarios/idle.ini
-- base: ../skip_locked.sql

-- name: enqueue
INSERT INTO qchaos.jobs (payload, group_key, max_attempts, run_after)
VALUES (:payload, :group_key, :max_attempts::int,
        now() + make_interval(secs => :delay_ms::int / 1000))
RETURNING id AS job_id;
