-- qchaos MUTANT: fail that does not keep the error it was given
-- Must be caught by: bounded_failure.  Exposed by: scenarios/poison.ini.
-- Issue 18: the snapshot does return the error column, so the rule that a
-- dead-lettered job keeps its error (shared/seeds: a useful diagnostic)
-- can judge it: this fail writes NULL where the error should go.  (A
-- protocol whose snapshot has no error column is not judged on it; see
-- docs/decisions.md.)
-- engine: postgres
-- model: lease
-- description: MUTANT fail drops the error text: dead jobs carry no diagnostic
-- expect: bounded_failure
-- scenario: scenarios/poison.ini
-- base: ../skip_locked.sql

-- name: fail
UPDATE qchaos.jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = clock_timestamp() + make_interval(secs => :delay_ms::int / 1000.0),
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = NULL
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
  AND :error::text IS NOT NULL
RETURNING state, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
