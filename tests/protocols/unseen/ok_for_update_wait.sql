-- qchaos unseen protocol (correct): FOR UPDATE without SKIP LOCKED.
-- The claim's CTE locks the head of the queue FOR UPDATE and waits for a
-- row another claim holds.  Under READ COMMITTED the lock re-checks the
-- WHERE clause on the row's newest version (EvalPlanQual): a row another
-- worker claimed meanwhile no longer says 'ready' and is dropped, and the
-- LIMIT takes the next one.  Slower under contention (claims queue on the
-- head row), never a double claim.
-- engine: postgres
-- model: lease
-- description: UNSEEN correct: CTE claim with a waiting FOR UPDATE (no SKIP LOCKED)
-- base: ../../../backends/postgres/skip_locked.sql

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    LIMIT :batch::int
    FOR UPDATE
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;
