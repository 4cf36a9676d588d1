-- qchaos MUTANT: the fail's retry time from NOW(6), the session time
-- zone's wall clock, where every other time of the queue is UTC
-- (UTC_TIMESTAMP(6)), on MariaDB / MySQL.  Identical only where the
-- session time_zone is UTC.  East of UTC NOW(6) is hours ahead of UTC:
-- the retry is due hours late (never retried within the run:
-- no_lost_jobs); west of it hours early (retry_delay).  Found by a breaker
-- (decision 1129).  Exposed by scenarios/poison.ini (session_time_zone
-- = -09:30, fast) and scenarios/clock_skew.ini (+13:00).  Everything else is
-- backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT fail's run_after from NOW(6), the session's local time
-- expect: retry_delay, no_lost_jobs
-- scenario: scenarios/poison.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = NOW(6)
                + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND,
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id AND token = :token AND state = 'inflight';
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;
