-- qchaos test protocol: skip_locked.sql with a reaper of two statements
-- that locks the row it reads (SELECT ... FOR UPDATE SKIP LOCKED, then the
-- UPDATE by id under that lock).  Correct: an owner's complete or renew
-- that comes between the read and the write waits for the reaper's commit
-- and changes 0 rows.  scripts/c09_rescuer.ini and
-- scripts/reap_renew_race.ini hold it at reap.1; before decision 1103
-- every later claim overran its lease too and the job was never finished
-- (no_lost_jobs FAIL, a false alarm).  Every checker must pass on it.
-- note: used by tests/check_e2e.c
-- engine: postgres
-- model: lease
-- description: skip_locked with a two-statement reaper that locks the row it reads
-- base: ../../backends/postgres/skip_locked.sql

-- name: reap
SELECT id AS job_id, token::text AS token
FROM qchaos.jobs
WHERE state = 'inflight' AND lease_until < clock_timestamp()
ORDER BY lease_until
LIMIT 1
FOR UPDATE SKIP LOCKED;
UPDATE qchaos.jobs
SET state = 'ready', token = NULL, lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint
RETURNING id AS job_id, :token::text AS token, state,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
