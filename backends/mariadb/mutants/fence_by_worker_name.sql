-- qchaos MUTANT: complete and fail fenced by the worker's name
-- (locked_by = :worker) instead of the claim's token, on MariaDB / MySQL:
-- the PostgreSQL mutant of the same name (decision 1115).  Several worker
-- threads of one host stamp locked_by with the host name; a thread that
-- stalled past its lease wakes after another thread of its host reclaimed
-- the job, and its stale complete or fail matches the new claim's
-- locked_by.  Exposed only when threads share a name:
-- scenarios/gate/stale_complete.ini and stale_fail.ini ([policy]
-- worker_name = host).  Everything else is backends/mariadb/skip_locked.sql.
-- Must be caught by stale_token_rejected.
-- engine: mariadb
-- model: lease
-- description: MUTANT complete/fail check locked_by = :worker, not the token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_complete.ini
-- base: ../skip_locked.sql

-- name: complete
-- autocommit: yes
UPDATE qchaos_jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id AND locked_by = :worker AND state = 'inflight' AND :token IS NOT NULL;
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;

-- name: fail
UPDATE qchaos_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = UTC_TIMESTAMP(6)
                + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND,
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id AND locked_by = :worker AND state = 'inflight' AND :token IS NOT NULL;
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;
