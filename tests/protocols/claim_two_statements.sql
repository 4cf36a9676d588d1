-- qchaos test protocol: skip_locked.sql with a claim of two statements (the
-- SELECT ... FOR UPDATE SKIP LOCKED, then the UPDATE by id, in one
-- transaction: four round trips with BEGIN and COMMIT).  Correct.  Under
-- network_latency_lease.ini's 100-180 ms each way a 500 ms lease left it 1-2
-- completed jobs of 24 (acked_durable near no opportunity, decision 1103).
-- Every checker must pass on it.
-- note: used by tests/check_e2e.c
-- engine: postgres
-- model: lease
-- description: skip_locked with a claim of two statements (SELECT FOR UPDATE SKIP LOCKED, then UPDATE)
-- base: ../../backends/postgres/skip_locked.sql

-- name: claim
SELECT id AS job_id
FROM qchaos.jobs
WHERE state = 'ready' AND run_after <= now()
ORDER BY run_after, id
FOR UPDATE SKIP LOCKED
LIMIT 1;
UPDATE qchaos.jobs j
SET state = 'inflight',
    token = gen_random_uuid(),
    attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
WHERE j.id = :job_id::bigint
RETURNING j.id AS job_id,
          j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt,
          j.id::text AS op_key,
          j.payload,
          j.group_key;
