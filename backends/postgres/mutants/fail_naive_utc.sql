-- qchaos MUTANT: the fail's retry time written as naive UTC wall time
-- (clock_timestamp() AT TIME ZONE 'UTC', a timestamp without time zone)
-- into the timestamptz run_after, which reads it in the session's time
-- zone.  Identical only where the session zone is UTC.  East of UTC the
-- retry is due hours before the fail (claimed again at once: retry_delay);
-- west of it hours after (never retried within the run: no_lost_jobs).
-- Found by a breaker (decision 1129): every scenario with fails ran in the
-- server's zone, so the whole gate passed it.  Exposed by
-- scenarios/clock_skew.ini (session_time_zone = +13:00) and
-- scenarios/poison.ini (-09:30).  Everything else is skip_locked.sql.
-- engine: postgres
-- model: lease
-- description: MUTANT fail's run_after from naive UTC wall time
-- expect: retry_delay, no_lost_jobs
-- scenario: scenarios/clock_skew.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = (clock_timestamp() AT TIME ZONE 'UTC')
                + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
