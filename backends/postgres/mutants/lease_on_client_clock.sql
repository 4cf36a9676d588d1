-- qchaos MUTANT: the lease is stamped on the application's clock, judged on the database's (C24)
-- Must be caught by: no_early_reap or effects_once.  Exposed by: scenarios/clock_skew.ini (in the gate battery).
-- shared/cases.md C24 (db-scheduler #433): the owner stamps its lease
-- (heartbeat) with its own host clock, and expiry is judged with another
-- clock.  Here claim and renew compute lease_until from :client_now_ms (the
-- worker's client clock, [faults] clock_skew_ms off the database's) while
-- the reaper compares it with the server's now().  A worker whose clock is
-- behind by more than the lease writes a lease that has already run out on
-- the server clock: the reaper takes the job back while the owner works on
-- it, another worker runs it too, and the effect is applied twice (a plain
-- sink).  Every lease the ledger shows is honoured as it was written (no
-- reap before its lease_until, no two live leases by server time), but the
-- claim's own answer shows a lease that ran out before it was granted:
-- no_early_reap's short-lease rule (decision 962) proves it, and the
-- duplicate run when a worker finishes before its first refused renew.
-- engine: postgres
-- model: lease
-- description: MUTANT claim and renew compute lease_until on the worker's (skewed) clock, reap on now()
-- expect: no_early_reap, effects_once
-- scenario: scenarios/clock_skew.ini
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
    lease_until = to_timestamp((:client_now_ms::float8 + :lease_ms::int) / 1000.0),
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
SET lease_until = to_timestamp((:client_now_ms::float8 + :lease_ms::int) / 1000.0)
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
