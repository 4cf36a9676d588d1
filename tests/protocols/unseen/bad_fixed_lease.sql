-- qchaos unseen protocol (BROKEN): the lease length is a constant in the
-- SQL (1 s, copied from a development config) while the workers are
-- configured with their own visibility timeout (:lease_ms) and renew every
-- third of it.  With lease_ms above 1 s a worker's lease runs out between
-- two of its renews (or during work it planned to fit in lease_ms): the
-- reaper takes the job back and another worker runs it again while the
-- first one is still working.  The claim returns the lease it really
-- granted (lease_until_ms).
-- engine: postgres
-- model: lease
-- description: UNSEEN broken: claim and renew grant a fixed 1 s lease, ignoring :lease_ms
-- expect: effects_once, exclusive_run
-- note: caught since decision 1107 by gate/lease_granted.ini (effects_once).
-- note (before): the gate gives exit 4 (seed 1), no violation: no scenario has work longer than 1 s with lease_ms above 1 s
-- base: ../../../backends/postgres/skip_locked.sql

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
    lease_until = clock_timestamp() + interval '1 second',
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
SET lease_until = clock_timestamp() + interval '1 second'
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING token::text AS token,
          (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
