-- qchaos MUTANT: the reaper refunds the attempt of every lease it takes back and
-- never marks a job dead, on MariaDB / MySQL: a job that kills its
-- worker every time is reaped and claimed forever (shared/cases.md C12).
-- Must be caught by: bounded_failure, no_lost_jobs.  Exposed by: scenarios/cases/c12_poison_crash.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT the reaper gives back the attempt and never marks a job dead
-- expect: bounded_failure, no_lost_jobs
-- scenario: scenarios/cases/c12_poison_crash.ini
-- base: ../skip_locked.sql

-- name: reap
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT JSON_ARRAYAGG(JSON_OBJECT('id', id, 'token', token)) AS reaped
FROM qchaos_jobs FORCE INDEX (qchaos_jobs_lease)
WHERE state = 'inflight' AND lease_until < UTC_TIMESTAMP(6)
HAVING COUNT(*) > 0
FOR UPDATE SKIP LOCKED;
UPDATE qchaos_jobs j
JOIN JSON_TABLE(:reaped, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$.id')) r ON j.id = r.id
SET j.state = 'ready', j.attempt = j.attempt - 1,
    j.token = NULL, j.lease_until = NULL, j.locked_by = NULL
WHERE j.state = 'inflight';
SELECT r.id AS job_id, r.token, j.state,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms
FROM JSON_TABLE(:reaped, '$[*]'
                COLUMNS (id BIGINT UNSIGNED PATH '$.id', token CHAR(36) PATH '$.token')) r
JOIN qchaos_jobs j ON j.id = r.id
ORDER BY r.id;
