-- qchaos MUTANT: op key equal to the claim token
-- Must be caught by: effects_once.  Exposed by: scenarios/kill_after_effect.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT the effect op key changes with every claim
-- expect: effects_once
-- scenario: scenarios/kill_after_effect.ini
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
          j.token::text AS op_key,
          j.payload,
          j.group_key;
