-- qchaos test protocol: skip_locked.sql whose reaper takes nothing back, so
-- a job whose worker was killed after its claim stays in flight for ever:
-- a lost job.  tests/drain.sh runs it with kill_after_claim to show that a
-- drain sampled by monitor_live (issue 16) still ends by the drain timeout
-- and no_lost_jobs still fails (the live counts show no progress).
-- note: used by tests/drain.sh
-- engine: postgres
-- model: lease
-- description: skip_locked.sql with a reaper that reaps nothing (loses killed workers' jobs)
-- base: ../../backends/postgres/skip_locked.sql

-- name: reap
SELECT id AS job_id, token::text AS token, state,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
FROM qchaos.jobs
WHERE false;
