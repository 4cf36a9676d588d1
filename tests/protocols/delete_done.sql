-- qchaos test protocol: skip_locked.sql whose complete deletes the row, as
-- many queues do to keep the table small (header "missing: done": a job
-- absent from the final snapshot was finished).  At the end of a drained
-- run the snapshot has no rows at all; the runner records that it was
-- taken (a job-less snapshot event, decision 1100), so no_lost_jobs and
-- acked_durable judge every job instead of saying "no final snapshot".
-- A correct protocol: every checker must pass on it.
-- note: used by tests/check_e2e.c
-- engine: postgres
-- model: lease
-- description: skip_locked.sql whose complete deletes the finished row
-- missing: done
-- base: ../../backends/postgres/skip_locked.sql

-- name: complete
DELETE FROM qchaos.jobs
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
