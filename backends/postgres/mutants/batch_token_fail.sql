-- qchaos MUTANT: one token per batch claim, and a fail keyed by that token alone
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/gate/batch_poison.ini
-- (batch claims with poison jobs, in the gate battery; decision 1122).
-- A batch is leased, renewed and logged as a unit: the claim writes ONE
-- token (gen_random_uuid() evaluated once, in a CTE) into every row it
-- takes.  complete is keyed by job id + token + state (right), but fail
-- was written from the "give the batch back" code path and is keyed by
-- token + state only.  When one job of a batch fails, every job of the
-- batch still in flight goes back to ready while its worker still holds
-- and runs it: other workers claim it again.  With batch = 1 the token is
-- per job and nothing is wrong; the batch scenario of shared/cases.md C02
-- has no poison job, so no fail.
-- engine: postgres
-- model: lease
-- description: MUTANT one token per batch claim; fail keyed by token + state (no job id)
-- expect: exclusive_claim
-- scenario: scenarios/gate/batch_poison.ini
-- base: ../skip_locked.sql

-- name: claim
WITH lease AS (SELECT gen_random_uuid() AS tok),
picked AS (
    SELECT id
    FROM qchaos.jobs
    WHERE state = 'ready' AND run_after <= now()
    ORDER BY run_after, id
    FOR UPDATE SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = lease.tok,
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked, lease
WHERE j.id = picked.id
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE token = :token::uuid AND state = 'inflight'
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
