-- qchaos MUTANT: a token derived from the job id (the same on every claim)
-- Must be caught by: stale_token_rejected (supersession is a fact about claims: issue 18).  Exposed by: scenarios/gate/stale_complete.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT claim token is md5(job id): a reclaim re-issues the old token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_complete.ini
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
    token = md5(j.id::text)::uuid,
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
          j.group_key;
