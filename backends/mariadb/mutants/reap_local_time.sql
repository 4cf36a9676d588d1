-- qchaos MUTANT: leases written in UTC, expiry judged on the session's local clock, on MariaDB / MySQL
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/slow_work.ini
-- ([faults] session_time_zone = +05:30, in the gate battery; decision 1120).
-- The claim and renew write lease_until from UTC_TIMESTAMP(6), as
-- backends/mariadb/skip_locked.sql does; the reaper compares it with
-- NOW(6), which is the session time zone's wall clock.  Identical only
-- where the session time_zone is UTC (the server's SYSTEM zone on a UTC
-- host).  East of UTC every lease looks expired hours early: the reaper
-- takes back every in-flight job at its next pass and others run it too.
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT reap compares UTC leases with NOW(6), the session's local time
-- expect: exclusive_claim
-- scenario: scenarios/slow_work.ini
-- base: ../skip_locked.sql

-- name: reap
-- run_after is left alone: a recovered job keeps its place at the head of
-- the queue.  No expired lease (HAVING): the step ends here with no rows.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT JSON_ARRAYAGG(JSON_OBJECT('id', id, 'token', token)) AS reaped
FROM qchaos_jobs FORCE INDEX (qchaos_jobs_lease)
WHERE state = 'inflight' AND lease_until < NOW(6)
HAVING COUNT(*) > 0
FOR UPDATE SKIP LOCKED;
UPDATE qchaos_jobs j
JOIN JSON_TABLE(:reaped, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$.id')) r ON j.id = r.id
SET j.state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    j.last_error = CASE WHEN j.attempt >= j.max_attempts
                        THEN CONCAT('lease expired on attempt ', j.attempt)
                        ELSE j.last_error END,
    j.token = NULL, j.lease_until = NULL, j.locked_by = NULL
WHERE j.state = 'inflight';
SELECT r.id AS job_id, r.token, j.state,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms
FROM JSON_TABLE(:reaped, '$[*]'
                COLUMNS (id BIGINT UNSIGNED PATH '$.id', token CHAR(36) PATH '$.token')) r
JOIN qchaos_jobs j ON j.id = r.id
ORDER BY r.id;

