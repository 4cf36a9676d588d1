-- qchaos MUTANT: fail ignores :delay_ms: a failed job is claimable at once, on
-- MariaDB / MySQL (the PostgreSQL mutant of the same name).
-- Must be caught by: retry_delay.  Exposed by: scenarios/scripts/c04_aba.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT fail makes the job ready at once, ignoring :delay_ms
-- expect: retry_delay
-- scenario: scenarios/scripts/c04_aba.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = UTC_TIMESTAMP(6),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id AND token = :token AND state = 'inflight';
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;
