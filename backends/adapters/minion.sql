-- qchaos library file: Minion 10 with Mojo::Pg (adapters/perl/minion.pl;
-- docs/adapters.md).  The library enqueues, claims, finishes and fails
-- through its own API; this file sets up, tears down and reads its table.
-- Minion keeps jobs in qchaos_minion.minion_jobs (Mojo::Pg migrates them
-- into the first schema of the search path), states inactive, active,
-- finished, failed; retries counts the retries (Backend::Pg::retry_job).
-- qchaos's job id is args->0->>'qc_id'.
-- Witness (shared/DESIGN.md): table qchaos_minion.minion_jobs, id id, state
-- state, owner worker (the token is (id, retries)).
-- Minion's own changes, in whichever worker's session runs repair
-- (Backend/Pg.pm repair: a job of a worker without heartbeat for
-- missing_after is failed 'Worker went away' by fail_job -> _update,
-- active -> failed, then auto_retry_job -> retry_job, failed -> inactive,
-- a second statement; a worker's own fail retries the same way):
-- witness: library=active>failed,failed>inactive
-- engine: postgres
-- model: adapter
-- description: Minion 10.25 (Debian libminion-perl) through its own worker (Minion::Worker->run), schema qchaos_minion
-- tested: qchaos CI, PostgreSQL 15, Minion 10.25 with Mojo::Pg 4.27 (Debian 12): scenarios/adapters/minion.ini

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP SCHEMA IF EXISTS qchaos_minion CASCADE;
CREATE SCHEMA qchaos_minion;

-- name: teardown
DROP SCHEMA IF EXISTS qchaos_minion CASCADE;

-- name: snapshot
SELECT (args->0->>'qc_id')::bigint AS job_id,
       CASE state WHEN 'finished' THEN 'done'
                  WHEN 'failed' THEN 'dead'
                  WHEN 'active' THEN 'inflight'
                  ELSE 'ready' END AS state,
       retries + CASE WHEN started IS NULL THEN 0 ELSE 1 END AS attempt,
       'r' || retries AS token,
       CASE WHEN state = 'failed' THEN result #>> '{}' END AS error
FROM qchaos_minion.minion_jobs
WHERE task = 'qchaos'
ORDER BY 1;

-- name: monitor
SELECT count(*) FILTER (WHERE state = 'inactive') AS ready,
       count(*) FILTER (WHERE state = 'active') AS inflight,
       count(*) FILTER (WHERE state = 'failed') AS dead,
       count(*) FILTER (WHERE state = 'finished') AS done,
       COALESCE(floor(extract(epoch FROM now() - min(delayed)
                FILTER (WHERE state = 'inactive' AND delayed <= now())) * 1000), 0)::bigint
           AS oldest_ready_age_ms
FROM qchaos_minion.minion_jobs
WHERE task = 'qchaos';
