-- qchaos MUTANT: claim reads a candidate without a lock, then updates it re-checking only its state (C04's ABA)
-- Must be caught by: retry_delay.  Exposed by: scenarios/scripts/c04_aba.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT unlocked read, then a conditional UPDATE that re-checks state but not run_after
-- expect: retry_delay
-- scenario: scenarios/scripts/c04_aba.ini
-- base: ../skip_locked.sql

-- name: claim
-- The bug (shared/cases.md C04, Quartz JDBC JobStore with
-- acquireTriggersWithinLock off): the candidate is read with no lock, and
-- the UPDATE that takes it re-checks only that the row is still 'ready'.
-- Two workers never both win (the second UPDATE finds 'inflight' and
-- matches 0 rows), which is why the bug hides: but if, between the read
-- and the write, another worker claimed the job, failed it, and it went
-- back to 'ready' with a run_after in the future, the stale UPDATE still
-- matches and runs the job again at once.
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
ORDER BY run_after, id
LIMIT 1;
UPDATE qchaos.jobs
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
WHERE id = :job_id::bigint AND state = 'ready'
RETURNING id AS job_id,
          token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          attempt,
          id::text AS op_key,
          payload,
          group_key;
