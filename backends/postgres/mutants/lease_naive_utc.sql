-- qchaos MUTANT: leases kept in a naive "timestamp" column "in UTC", judged against the session's local time
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/slow_work.ini
-- ([faults] session_time_zone = +05:30, in the gate battery; decision 1120).
-- The claim and renew write (clock_timestamp() AT TIME ZONE 'UTC') + lease
-- into a timestamp WITHOUT time zone, and lease_until_ms reads the column
-- as UTC; the reaper (written by someone else) compares it with
-- localtimestamp, the session's wall clock.  Identical only where the
-- session TimeZone is UTC, as on a fresh initdb in a container.  On a
-- server, role or connection whose TimeZone is east of UTC every lease
-- looks expired hours early: the reaper takes back every in-flight job at
-- its next pass and other workers run it too.  West of UTC the reaper
-- recovers crashed workers' jobs hours late.
-- engine: postgres
-- model: lease
-- description: MUTANT lease_until in a naive UTC timestamp, reaper compares with localtimestamp
-- expect: exclusive_claim
-- scenario: scenarios/slow_work.ini
-- base: ../skip_locked.sql

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;
DROP TABLE IF EXISTS qchaos.jobs;
CREATE TABLE qchaos.jobs (
    id           bigserial PRIMARY KEY,
    state        text NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'done', 'dead')),
    run_after    timestamptz NOT NULL DEFAULT now(),
    attempt      int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    token        uuid,
    lease_until  timestamp,
    locked_by    text,
    payload      text,
    group_key    text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_ready ON qchaos.jobs (run_after, id) WHERE state = 'ready';
CREATE INDEX jobs_inflight ON qchaos.jobs (lease_until) WHERE state = 'inflight';

-- name: claim
WITH picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    FOR UPDATE SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;

-- name: renew
UPDATE qchaos.jobs
SET lease_until = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => :lease_ms::int / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: reap
WITH expired AS (
    SELECT id, token
    FROM qchaos.jobs
    WHERE state = 'inflight' AND lease_until < localtimestamp
    FOR UPDATE SKIP LOCKED
)
UPDATE qchaos.jobs j
SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    last_error = CASE WHEN j.attempt >= j.max_attempts
                      THEN 'lease expired on attempt ' || j.attempt ELSE j.last_error END,
    token = NULL, lease_until = NULL, locked_by = NULL
FROM expired e
WHERE j.id = e.id
RETURNING j.id AS job_id, e.token::text AS token, j.state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

-- name: monitor
SELECT count(*) FILTER (WHERE state = 'ready') AS ready,
       count(*) FILTER (WHERE state = 'inflight') AS inflight,
       count(*) FILTER (WHERE state = 'inflight' AND lease_until < localtimestamp) AS expired,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       count(*) FILTER (WHERE state = 'done') AS done,
       coalesce((extract(epoch FROM now() - min(run_after)
                 FILTER (WHERE state = 'ready' AND run_after <= now())) * 1000)::bigint, 0)
           AS oldest_ready_age_ms
FROM qchaos.jobs;

-- name: monitor_live
SELECT (SELECT count(*) FROM qchaos.jobs WHERE state = 'ready') AS ready,
       (SELECT count(*) FROM qchaos.jobs WHERE state = 'inflight') AS inflight,
       (SELECT count(*) FROM qchaos.jobs
        WHERE state = 'inflight' AND lease_until < localtimestamp) AS expired,
       (SELECT count(*) FROM qchaos.jobs WHERE state = 'dead') AS dead,
       0::bigint AS oldest_ready_age_ms;
