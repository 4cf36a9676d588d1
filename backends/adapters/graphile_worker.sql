-- qchaos library file: graphile-worker 0.17 (adapters/node/graphile_worker.js;
-- docs/adapters.md).  The library enqueues, claims, completes and fails
-- through its own API; this file sets up, tears down and reads its table.
-- graphile-worker keeps jobs in qchaos_graphile._private_jobs and DELETEs a
-- completed job (sql/completeJobs.js), so the adapter's enqueuer records
-- every job it enqueued in qchaos.adapter_enqueued: an enqueued job without
-- a row is done.  A job is dead when attempts reached max_attempts and it is
-- not locked (sql/failJobs.js clears locked_at).  qchaos's job id is
-- payload->>'qc_id'.
-- Witness (shared/DESIGN.md): table qchaos_graphile._private_jobs, id id,
-- state (none: locked_at / attempts / the row's presence), owner locked_by.
-- engine: postgres
-- model: adapter
-- description: graphile-worker 0.17.3 through its own worker (run()), schema qchaos_graphile
-- tested: qchaos CI, PostgreSQL 15, graphile-worker 0.17.3 on Node 20: scenarios/adapters/graphile_worker.ini

-- name: setup
-- graphile-worker creates its schema itself (the enqueuer's migrate).
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP SCHEMA IF EXISTS qchaos_graphile CASCADE;
DROP TABLE IF EXISTS qchaos.adapter_enqueued;
CREATE TABLE qchaos.adapter_enqueued (job_id bigint PRIMARY KEY, lib_id text NOT NULL);

-- name: teardown
DROP SCHEMA IF EXISTS qchaos_graphile CASCADE;
DROP TABLE IF EXISTS qchaos.adapter_enqueued;

-- name: snapshot
SELECT e.job_id AS job_id,
       CASE WHEN j.id IS NULL THEN 'done'
            WHEN j.locked_at IS NOT NULL THEN 'inflight'
            WHEN j.attempts >= j.max_attempts THEN 'dead'
            ELSE 'ready' END AS state,
       j.attempts AS attempt,
       j.locked_by || '@' || floor(extract(epoch FROM j.locked_at) * 1000)::bigint AS token,
       j.last_error AS error
FROM qchaos.adapter_enqueued e
LEFT JOIN qchaos_graphile._private_jobs j ON j.id = e.lib_id::bigint
ORDER BY 1;

-- name: monitor
SELECT count(*) FILTER (WHERE j.id IS NOT NULL AND j.locked_at IS NULL
                          AND j.attempts < j.max_attempts) AS ready,
       count(*) FILTER (WHERE j.locked_at IS NOT NULL) AS inflight,
       count(*) FILTER (WHERE j.locked_at < now() - interval '4 hours') AS expired,
       count(*) FILTER (WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts) AS dead,
       count(*) FILTER (WHERE j.id IS NULL) AS done,
       COALESCE(floor(extract(epoch FROM now() - min(j.run_at)
                FILTER (WHERE j.locked_at IS NULL AND j.attempts < j.max_attempts
                          AND j.run_at <= now())) * 1000), 0)::bigint AS oldest_ready_age_ms
FROM qchaos.adapter_enqueued e
LEFT JOIN qchaos_graphile._private_jobs j ON j.id = e.lib_id::bigint;
