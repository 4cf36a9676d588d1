-- qchaos MUTANT: the complete is valid only on the claim's own session (a session advisory lock)
-- Must be caught by: no_early_reap.  Exposed by: scenarios/network_reset.ini (in the gate battery).
-- Que (before 1.0) and queues built like it hold each job by a session-level
-- advisory lock and treat "my session still holds the lock" as proof of
-- ownership.  Here the claim is skip_locked.sql's (a token and a lease on
-- the server clock) and also takes pg_try_advisory_lock(id); the complete
-- checks the token and counts only when pg_advisory_unlock(id) succeeds.
-- On one unbroken connection that is the same thing.  When the network
-- resets the connection (qchaos's proxy answers the complete with an RST),
-- the server ends the session and its locks with it; the worker reconnects
-- and retries its complete with its token while its lease is live, and the
-- new session holds no lock: the complete changes 0 rows.  The owner's
-- request is refused before its lease_until: no_early_reap, rule (b).  The
-- job then waits out its lease, the reaper returns it and it runs again.
-- engine: postgres
-- model: lease
-- description: MUTANT complete counts only when the session still holds the claim's advisory lock (lost with a reset connection)
-- expect: no_early_reap
-- scenario: scenarios/network_reset.ini
-- base: ../skip_locked.sql

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
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
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
          j.group_key,
          pg_try_advisory_lock(j.id) AS locked;

-- name: complete
-- The bug: the lock, not the token, decides.  The token and state are
-- checked first (an index condition and a cheap filter), so a stale
-- complete never releases another session's lock.
WITH mine AS (
    SELECT id
    FROM qchaos.jobs
    WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
)
UPDATE qchaos.jobs j
SET state = 'done', lease_until = NULL, locked_by = NULL
FROM mine
WHERE j.id = mine.id AND pg_advisory_unlock(mine.id)
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
