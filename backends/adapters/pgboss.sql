-- qchaos library file: pg-boss 10 (adapters/node/pgboss.js; docs/adapters.md).
-- The library enqueues, claims, completes and fails through its own API; this
-- file only sets up, tears down and reads the library's table.  pg-boss keeps
-- every queue's jobs in qchaos_pgboss.job (a partition per queue), states
-- created, retry, active, completed, cancelled, failed.  A failed attempt is
-- DELETEd and re-INSERTed with the same id (src/plans.js failJobs).  qchaos's
-- job id is data->>'qc_id' (the adapter puts it there at enqueue).
-- Witness (shared/DESIGN.md): table qchaos_pgboss.job, id id, state state,
-- owner started_on (pg-boss has no token and no owner column; every fetch
-- writes started_on = now(), which the adapter reports as the claim's token).
-- pg-boss's own expiry (boss.js expire -> plans.js failJobsByTimeout ->
-- failJobs) runs in every worker process (supervise) and moves an expired
-- active job by DELETE and re-INSERT (retry or failed) in one statement: the
-- delete is the library's own change, the insert the same transaction's.
-- witness: library=active>NULL
-- engine: postgres
-- model: adapter
-- description: pg-boss 10.4.2 through its own worker loop (boss.work), schema qchaos_pgboss
-- tested: qchaos CI, PostgreSQL 15, pg-boss 10.4.2 on Node 20: scenarios/adapters/pgboss.ini

-- name: setup
-- pg-boss creates its schema itself when the enqueuer starts (migrate);
-- a schema left by a killed run goes first.  The schema qchaos holds nothing
-- (qchaos marks it as its own and drops it at the end).
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP SCHEMA IF EXISTS qchaos_pgboss CASCADE;

-- name: teardown
DROP SCHEMA IF EXISTS qchaos_pgboss CASCADE;

-- name: snapshot
-- done: completed; dead: failed (retries used up) or cancelled; ready:
-- created or retry; inflight: active.  token: the last claim's started_on
-- in epoch ms, as the adapter reports it (node-postgres keeps ms).
SELECT (data->>'qc_id')::bigint AS job_id,
       CASE state WHEN 'completed' THEN 'done'
                  WHEN 'failed' THEN 'dead'
                  WHEN 'cancelled' THEN 'dead'
                  WHEN 'active' THEN 'inflight'
                  ELSE 'ready' END AS state,
       retry_count + CASE WHEN started_on IS NULL THEN 0 ELSE 1 END AS attempt,
       floor(extract(epoch FROM started_on) * 1000)::bigint::text AS token,
       -- a fail's error object ({"message": ...}), or the expiry's own
       -- ({"value": {"message": "job failed by timeout in active state"}},
       -- src/plans.js failJobsByTimeout: a last attempt that ran past its
       -- expiry on a loaded machine dies so; decision 1112)
       COALESCE(output->>'message', output->'value'->>'message') AS error
FROM qchaos_pgboss.job
WHERE name = 'qchaos'
ORDER BY 1;

-- name: monitor
SELECT count(*) FILTER (WHERE state IN ('created', 'retry')) AS ready,
       count(*) FILTER (WHERE state = 'active') AS inflight,
       count(*) FILTER (WHERE state = 'active' AND started_on + expire_in < now()) AS expired,
       count(*) FILTER (WHERE state IN ('failed', 'cancelled')) AS dead,
       count(*) FILTER (WHERE state = 'completed') AS done,
       COALESCE(floor(extract(epoch FROM now() - min(start_after)
                FILTER (WHERE state IN ('created', 'retry') AND start_after <= now())) * 1000),
                0)::bigint AS oldest_ready_age_ms
FROM qchaos_pgboss.job
WHERE name = 'qchaos';
