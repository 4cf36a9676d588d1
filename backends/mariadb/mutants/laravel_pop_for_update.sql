-- qchaos MUTANT: Laravel's database queue before PR #31287 (shared/cases.md
-- C19): pop() locks its job with a plain FOR UPDATE through the queue
-- index at REPEATABLE READ.  It locks queue-index records, then the row;
-- the delete of a finished job locks the row by primary key, then needs
-- its queue-index record: the two take the same locks in opposite orders
-- and InnoDB kills one (1213).  A killed delete rolls back after the job
-- ran; the worker gives the job up and it is popped again once its
-- reservation runs out: its effect applied twice.
-- Must be caught by: effects_once.  Exposed by: scenarios/cases/c19_pop_deadlock.ini.
-- engine: mariadb
-- model: lease
-- description: MUTANT Laravel pop with FOR UPDATE (no SKIP LOCKED), deadlocking with the delete
-- expect: effects_once
-- scenario: scenarios/cases/c19_pop_deadlock.ini
-- base: ../laravel_queue.sql

-- name: claim
SELECT id AS job_id
FROM qchaos_ljobs FORCE INDEX (qchaos_ljobs_queue)
WHERE queue = 'default'
  AND ((reserved_until IS NULL AND available_at <= UTC_TIMESTAMP(6))
       OR reserved_until <= UTC_TIMESTAMP(6))
ORDER BY id
LIMIT 1
FOR UPDATE;
UPDATE qchaos_ljobs
SET reserved_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND,
    attempts = attempts + 1,
    token = UUID(),
    locked_by = :worker
WHERE id = :job_id;
SELECT id AS job_id,
       token,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', reserved_until) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms,
       attempts AS attempt,
       CAST(id AS CHAR) AS op_key,
       payload
FROM qchaos_ljobs
WHERE id = :job_id;

