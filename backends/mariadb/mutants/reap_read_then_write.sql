-- qchaos MUTANT: the reaper reads expired leases with a plain SELECT (no FOR UPDATE),
-- then resets those ids with state = 'inflight' only, on MariaDB / MySQL:
-- a lease renewed, or a job reclaimed, between the read and the write is
-- taken back from its live owner (shared/cases.md C09's kind).
-- Must be caught by: exclusive_claim or no_early_reap.  Exposed by:
-- scenarios/scripts/reap_renew_race.ini (in the MariaDB gate battery; its
-- reap.1 is after the SELECT since decision 1128).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT the reaper reads expired leases without a lock, then writes by id
-- expect: exclusive_claim, no_early_reap
-- scenario: scenarios/scripts/reap_renew_race.ini
-- base: ../skip_locked.sql

-- name: reap
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT JSON_ARRAYAGG(JSON_OBJECT('id', id, 'token', token)) AS reaped
FROM qchaos_jobs FORCE INDEX (qchaos_jobs_lease)
WHERE state = 'inflight' AND lease_until < UTC_TIMESTAMP(6)
HAVING COUNT(*) > 0;
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
