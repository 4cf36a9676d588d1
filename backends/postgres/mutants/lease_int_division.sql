-- qchaos MUTANT: the lease is computed with integer division,
-- :lease_ms::int / 1000, so 2500 ms becomes 2 s (and anything under a
-- second becomes 0): the queue grants less than the application asked for
-- and a job whose work fits the asked lease is reaped mid-work and run a
-- second time (decision 1107).
-- Must be caught by: effects_once.  Exposed by: scenarios/gate/lease_granted.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT claim's lease by integer division (2500 ms -> 2 s)
-- expect: effects_once
-- scenario: scenarios/gate/lease_granted.ini
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
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000),
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
