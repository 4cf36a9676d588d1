-- qchaos MUTANT: complete checks the token but not that the job is still
-- in flight.  The token is kept on a done row, so a complete sent again
-- with the same token (the retry after a lost answer, or a duplicate
-- delivery of the same request) completes the job a second time: its
-- side effects (a result row, a notification, a counter) run twice,
-- though no other worker ever held the job.  Caught only because qchaos
-- knows the lost answer it threw away said rows > 0 (decision 1101).
-- Must be caught by: double_complete.  Exposed by: scenarios/lost_ack.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT complete checks id and token, not state = 'inflight'
-- expect: double_complete
-- scenario: scenarios/lost_ack.ini
-- base: ../skip_locked.sql

-- name: complete
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND token = :token::uuid
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
