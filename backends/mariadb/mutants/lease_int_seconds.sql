-- qchaos MUTANT: the claim's lease in whole seconds (INTERVAL :lease_ms DIV 1000
-- SECOND), on MariaDB / MySQL: a 2,500 ms lease is granted as 2 s, the
-- job's work outlives it and the reaper hands it to another worker
-- (the PostgreSQL mutant lease_int_division).
-- Must be caught by: effects_once.  Exposed by: scenarios/gate/lease_granted.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT the claim's lease is :lease_ms DIV 1000 whole seconds
-- expect: effects_once
-- scenario: scenarios/gate/lease_granted.ini
-- base: ../skip_locked.sql

-- name: claim
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT id AS job_id
FROM qchaos_jobs
WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(6)
ORDER BY run_after, id
LIMIT 1
FOR UPDATE SKIP LOCKED;
UPDATE qchaos_jobs
SET state = 'inflight',
    token = UUID(),
    attempt = attempt + 1,
    lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) DIV 1000 SECOND,
    locked_by = :worker
WHERE id = :job_id AND state = 'ready';
SELECT id AS job_id,
       token,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms,
       attempt,
       CAST(id AS CHAR) AS op_key,
       payload,
       group_key
FROM qchaos_jobs
WHERE id = :job_id AND state = 'inflight';
