-- qchaos MUTANT: claim as SELECT ... LIMIT 1 without FOR UPDATE, then a
-- separate UPDATE by id (no row lock, no state check), on MariaDB / MySQL.
-- Everything else is backends/mariadb/skip_locked.sql.
-- Must be caught by exclusive_claim.  Exposed by scenarios/gate/contention.ini
-- (and scenarios/default.ini, at 20,000 jobs a minute on MariaDB).
-- engine: mariadb
-- model: lease
-- description: MUTANT select-then-update claim without a row lock
-- expect: exclusive_claim
-- scenario: scenarios/gate/contention.ini
-- base: ../skip_locked.sql

-- name: claim
-- The bug: read a ready job without any lock (a consistent read of the
-- transaction's snapshot), then update it by id.  Two workers that read the
-- same row both "win": the second UPDATE waits for the first to commit and
-- then overwrites its token and lease.
SELECT id AS job_id
FROM qchaos_jobs
WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(6)
ORDER BY run_after, id
LIMIT 1;
UPDATE qchaos_jobs
SET state = 'inflight',
    token = UUID(),
    attempt = attempt + 1,
    lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND,
    locked_by = :worker
WHERE id = :job_id;
SELECT id AS job_id,
       token,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms,
       attempt,
       CAST(id AS CHAR) AS op_key,
       payload,
       group_key
FROM qchaos_jobs
WHERE id = :job_id;
