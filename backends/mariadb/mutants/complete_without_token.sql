-- qchaos MUTANT: complete without the token, on MariaDB / MySQL: a worker that stalled
-- past its lease completes the job another worker now holds (the
-- PostgreSQL mutant of the same name).
-- Must be caught by: stale_token_rejected.  Exposed by: scenarios/gate/stale_complete.ini (in the MariaDB gate battery).
-- Everything else is backends/mariadb/skip_locked.sql.
-- engine: mariadb
-- model: lease
-- description: MUTANT complete checks id and state, not the token
-- expect: stale_token_rejected
-- scenario: scenarios/gate/stale_complete.ini
-- base: ../skip_locked.sql

-- name: complete
-- autocommit: yes
UPDATE qchaos_jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id AND state = 'inflight' AND :token IS NOT NULL;
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;
