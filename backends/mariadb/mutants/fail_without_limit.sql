-- qchaos MUTANT: fail never ends a job: every failure puts it back as ready whatever
-- its attempts, on MariaDB / MySQL; a poison job is retried forever.
-- Must be caught by: bounded_failure.  Exposed by: scenarios/poison.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT fail always makes the job ready again, never dead
-- expect: bounded_failure
-- scenario: scenarios/poison.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos_jobs
SET state = 'ready',
    run_after = UTC_TIMESTAMP(6)
                + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND,
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id AND token = :token AND state = 'inflight';
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;
