-- qchaos MUTANT: renew without the token, on MariaDB / MySQL: a stalled worker's renew
-- extends the lease of the job's new owner and is answered as its own.
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/gate/stale_complete.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT renew checks id and state, not the token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_complete.ini
-- base: ../skip_locked.sql

-- name: renew
UPDATE qchaos_jobs
SET lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND
WHERE id = :job_id AND state = 'inflight';
SELECT COUNT(*) AS `rows`,
       MAX(token) AS token,
       MAX(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until)) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms
FROM qchaos_jobs
WHERE id = :job_id AND state = 'inflight';
