-- qchaos MUTANT: batch claim as UPDATE ... WHERE id IN (subquery LIMIT n FOR UPDATE SKIP LOCKED)
-- Must be caught by: batch_bound.  Exposed by: scenarios/cases/c02_batch_limit.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT batch claim that can return more rows than asked for
-- expect: batch_bound
-- scenario: scenarios/cases/c02_batch_limit.ini
-- base: ../skip_locked.sql

-- name: claim
-- The bug (shared/cases.md C02): the LIMIT ... FOR UPDATE SKIP LOCKED
-- subquery sits under IN.  When the planner puts it on the inner side of a
-- nested-loop semi join, it is run again for every outer row; each rerun
-- skips the rows this same statement has already updated (LockRows treats a
-- row modified by its own command as gone) and returns the next :batch
-- rows, so one claim takes far more than :batch jobs (on PostgreSQL 15 with
-- 5,000 ready rows and LIMIT 10: all 5,000).  The four settings below make
-- that plan the cheapest, as load and statistics did in the field report;
-- without them PostgreSQL 15 unique-ifies the subquery and runs it once.
-- The CTE form (skip_locked.sql) runs the subquery once whatever the plan.
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_hashagg = off;
SET LOCAL enable_sort = off;
SET LOCAL enable_material = off;
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
WHERE j.id IN (SELECT id
               FROM qchaos.jobs
               WHERE state = 'ready' AND run_after <= now()
               ORDER BY run_after, id
               LIMIT :batch::int
               FOR UPDATE SKIP LOCKED)
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;
