-- qchaos protocol: Laravel's database queue on MariaDB / MySQL (InnoDB),
-- after the fix of laravel/framework PR #31287 / #39396: the claim (pop)
-- reads through the queue index with FOR UPDATE SKIP LOCKED.  The table is
-- the one of shared/cases.md C19: a primary key and a secondary index on
-- `queue`; a job is reserved by setting reserved_until (Laravel's
-- reserved_at + retry_after), and pop takes a job that is available or
-- whose reservation ran out, so the claim is also the recovery (no reaper:
-- an expired reservation is claimed again, as Laravel does).
--
-- complete (deleteReserved) is one transaction: lock the finished row by
-- primary key and token, copy it into qchaos_ljobs_done, delete it.  The
-- copy is the recipe's: a done table the snapshot reads beside the queue,
-- so a finished job is `done` in the snapshot instead of missing (no
-- `missing:` header is needed; a job deleted without its copy is lost).
-- The token (UUID() at each claim) fences a worker whose reservation ran
-- out and was claimed again: its complete finds no row with its token.
--
-- Isolation: MariaDB's default, REPEATABLE READ, as Laravel runs it.  The
-- bug this file's mutant keeps (backends/mariadb/mutants/
-- laravel_pop_for_update.sql): a plain FOR UPDATE pop waits on the
-- queue-index records the delete of a finished job holds while the delete
-- waits for the row pop locked, in the opposite order: InnoDB kills one
-- (1213); a killed delete rolls back after the job ran, and the job runs
-- again when its reservation runs out.  With SKIP LOCKED pop never waits.
--
-- Left out of Laravel's queue: no renew (Laravel has none), fail releases
-- the job (attempts < max) or moves it to the done table as dead.  Not a
-- whole queue for the gate: like Laravel's table alone (its worker counts
-- the tries), a reservation that runs out is popped again without a limit,
-- and without a renew work longer than the reservation is run again:
-- `qchaos gate` FAILs it on max_attempts.ini, cases/c12_poison_crash.ini
-- (no_lost_jobs, bounded_failure), slow_work.ini and stall_in_work.ini
-- (no_lost_jobs), and passes the other 23 scenarios (decision 1108).  It
-- is here for C19's race.
-- engine: mariadb
-- model: lease
-- description: Laravel database queue (C19): FOR UPDATE SKIP LOCKED pop through the queue index, delete + done copy on complete
-- tested: qchaos, MariaDB 10.11 through unixODBC: scenarios/cases/c19_pop_deadlock.ini

-- name: setup
DROP TABLE IF EXISTS qchaos_ljobs_done;
DROP TABLE IF EXISTS qchaos_ljobs;
CREATE TABLE qchaos_ljobs (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    queue          VARCHAR(255) NOT NULL DEFAULT 'default',
    payload        MEDIUMTEXT NULL,
    attempts       INT NOT NULL DEFAULT 0,
    max_attempts   INT NOT NULL DEFAULT 3,
    reserved_until DATETIME(6) NULL,
    available_at   DATETIME(6) NOT NULL,
    token          CHAR(36) NULL,
    locked_by      VARCHAR(64) NULL,
    last_error     TEXT NULL,
    KEY qchaos_ljobs_queue (queue)
) ENGINE = InnoDB;
CREATE TABLE qchaos_ljobs_done (
    id         BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    state      VARCHAR(8) NOT NULL,
    attempts   INT NOT NULL,
    token      CHAR(36) NULL,
    last_error TEXT NULL
) ENGINE = InnoDB;

-- name: teardown
DROP TABLE IF EXISTS qchaos_ljobs_done;
DROP TABLE IF EXISTS qchaos_ljobs;

-- name: enqueue
INSERT INTO qchaos_ljobs (payload, max_attempts, available_at)
VALUES (:payload, COALESCE(CAST(:max_attempts AS SIGNED), 3),
        UTC_TIMESTAMP(6) + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND);
SELECT LAST_INSERT_ID() AS job_id;

-- name: claim
SELECT id AS job_id
FROM qchaos_ljobs FORCE INDEX (qchaos_ljobs_queue)
WHERE queue = 'default'
  AND ((reserved_until IS NULL AND available_at <= UTC_TIMESTAMP(6))
       OR reserved_until <= UTC_TIMESTAMP(6))
ORDER BY id
LIMIT 1
FOR UPDATE SKIP LOCKED;
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

-- name: complete
SELECT id AS job_id
FROM qchaos_ljobs
WHERE id = :job_id AND token = :token
FOR UPDATE;
INSERT INTO qchaos_ljobs_done (id, state, attempts, token)
SELECT id, 'done', attempts, token FROM qchaos_ljobs WHERE id = :job_id AND token = :token;
DELETE FROM qchaos_ljobs WHERE id = :job_id AND token = :token;
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;

-- name: fail
-- Released with its delay while attempts are left; else copied to the done
-- table as dead and deleted.  The first statement locks the row by token
-- (no row: a stale fail, the step ends with no rows).
SELECT id AS job_id, IF(attempts >= max_attempts, 1, 0) AS last_attempt
FROM qchaos_ljobs
WHERE id = :job_id AND token = :token
FOR UPDATE;
INSERT INTO qchaos_ljobs_done (id, state, attempts, token, last_error)
SELECT id, 'dead', attempts, token, :error FROM qchaos_ljobs
WHERE id = :job_id AND :last_attempt = 1;
UPDATE qchaos_ljobs
SET reserved_until = NULL, token = NULL, locked_by = NULL, last_error = :error,
    available_at = UTC_TIMESTAMP(6)
                   + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND
WHERE id = :job_id AND :last_attempt = 0;
DELETE FROM qchaos_ljobs WHERE id = :job_id AND :last_attempt = 1;
SELECT 1 AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;

-- name: snapshot
SELECT id AS job_id,
       CASE WHEN reserved_until IS NULL THEN 'ready' ELSE 'inflight' END AS state,
       attempts AS attempt, token, last_error AS error
FROM qchaos_ljobs
UNION ALL
SELECT id AS job_id, state, attempts AS attempt, token, last_error AS error
FROM qchaos_ljobs_done
ORDER BY job_id;

-- name: monitor
SELECT (SELECT COUNT(*) FROM qchaos_ljobs WHERE reserved_until IS NULL) AS ready,
       (SELECT COUNT(*) FROM qchaos_ljobs WHERE reserved_until IS NOT NULL) AS inflight,
       (SELECT COUNT(*) FROM qchaos_ljobs WHERE reserved_until <= UTC_TIMESTAMP(6)) AS expired,
       (SELECT COUNT(*) FROM qchaos_ljobs_done WHERE state = 'dead') AS dead,
       (SELECT COUNT(*) FROM qchaos_ljobs_done WHERE state = 'done') AS done,
       0 AS oldest_ready_age_ms;

-- name: server_pid
SELECT CONNECTION_ID() AS pid;

-- name: kill_session
KILL CONNECTION :pid;
