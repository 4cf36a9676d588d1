-- qchaos protocol: MariaDB 10.11 / MySQL 8 (InnoDB) job queue with
-- SELECT ... FOR UPDATE SKIP LOCKED.  The same queue as
-- backends/postgres/skip_locked.sql, following the SKIP LOCKED pattern
-- (shared/seeds/postgres-skip-locked.txt, its MySQL note): there is no
-- UPDATE ... RETURNING here, so the claim is ONE transaction of three
-- statements after its isolation level (lock one ready row with FOR UPDATE SKIP LOCKED, mark it
-- inflight with a fresh token (UUID()) and a lease, read it back).  The row
-- lock is held from the SELECT until the COMMIT, i.e. until the row says
-- 'inflight'.  complete, renew and fail are conditional on job id AND token
-- AND state 'inflight'; the reaper takes back only expired leases and
-- clears the token, so the old owner's token is rejected from then on.
--
-- Isolation.  MariaDB's default is REPEATABLE READ, and its row semantics
-- would do for the claim: InnoDB's locking reads (SELECT ... FOR UPDATE,
-- UPDATE) do not read the transaction's snapshot but the latest committed
-- version of each row, so the claim's SELECT never picks a row another
-- claim committed as inflight a moment ago, and its UPDATE works on the row
-- as it is now.  But REPEATABLE READ also takes next-key (gap) locks on the
-- index ranges a locking read scans, and the claim's UPDATE moves its row's
-- ready-index entry from ('ready', ...) to ('inflight', ...), i.e. into the
-- gap just before the head of the ready range, which the claim holding the
-- head row has gap-locked: every concurrent claim's UPDATE waited for the
-- claim before it (measured: the second of two interleaved claims hit the
-- 50 s lock wait timeout, 1205), and waits in opposite directions are
-- deadlocks (1213, SQLSTATE 40001).  So claim and reap start with SET
-- TRANSACTION ISOLATION LEVEL READ COMMITTED (it applies to the transaction
-- the step is about to start): the same latest-committed locking reads,
-- record locks only, no gap locks.  The claim's last SELECT is a plain
-- read; at READ COMMITTED every such read takes a fresh snapshot, which
-- includes the transaction's own UPDATE.  complete, renew and fail stay at
-- the default: an UPDATE by primary-key equality locks just that record at
-- any level.
--
-- Time.  Every time is UTC: columns are DATETIME(6) written from
-- UTC_TIMESTAMP(6), and epoch milliseconds are
-- TIMESTAMPDIFF(MICROSECOND, '1970-01-01', t) / 1000, which does not depend
-- on the session time zone (UNIX_TIMESTAMP(datetime) reads the value in the
-- session zone, ambiguous in a daylight-saving fall-back hour).
-- UTC_TIMESTAMP() and NOW() are the start time of the current statement,
-- and every statement of a step is a statement of its own, so the claim's
-- now_ms (its last statement) is read after its SELECT took the row lock:
-- the property SYSDATE(6) would give, without its time-zone conversion.
--
-- Counts.  complete and fail report the UPDATE's count in an explicit
-- `rows` column (SELECT ROW_COUNT() right after it on the same connection:
-- the driver's server-side prepare of that SELECT does not reset it; an SQL
-- PREPARE statement would).  MariaDB counts changed rows, and these UPDATEs
-- always change state.  complete runs in autocommit (two round trips, no
-- transaction): once done a job cannot change hands, so a now_ms read just
-- after the commit is harmless.  fail makes the job claimable again, so its
-- now_ms is read inside its transaction, before the commit.  renew counts
-- by reading its row back (id, token, state): the same answer, and no
-- question of changed versus matched rows.  `rows` needs backquotes: ROWS
-- is a reserved word.
--
-- Batch.  The claim takes one job whatever :batch says (LIMIT takes no
-- text parameter, and only the first row of a statement carries over to
-- the next): run scenarios with batch = 1.
--
-- Reap.  UPDATE has no SKIP LOCKED and no RETURNING, and only one row
-- carries over between statements, so the reaper locks every expired lease
-- it can get (FOR UPDATE SKIP LOCKED) and carries their ids and old tokens
-- as one JSON array; the UPDATE and the final SELECT join it through
-- JSON_TABLE (MariaDB 10.6+, MySQL 8.0.4+), one primary-key lookup per job.
--
-- engine: mariadb
-- model: lease
-- description: three-statement SKIP LOCKED claim in one transaction, token-checked complete/renew/fail, JSON-carried lease reaper
-- tested: qchaos CI, MariaDB 10.11 through unixODBC: the fault scenarios (kill, stall, lost ack/request, poison)

-- name: setup
DROP TABLE IF EXISTS qchaos_jobs;
CREATE TABLE qchaos_jobs (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    state        VARCHAR(8) NOT NULL DEFAULT 'ready'
                 CHECK (state IN ('ready', 'inflight', 'done', 'dead')),
    run_after    DATETIME(6) NOT NULL,
    attempt      INT NOT NULL DEFAULT 0,
    max_attempts INT NOT NULL DEFAULT 3,
    token        CHAR(36) NULL,
    lease_until  DATETIME(6) NULL,
    locked_by    VARCHAR(64) NULL,
    payload      MEDIUMTEXT NULL,
    group_key    VARCHAR(255) NULL,
    last_error   TEXT NULL,
    created_at   DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    -- The claim's scan in its exact order (state first: InnoDB has no
    -- partial indexes, done rows sit in their own range).
    KEY qchaos_jobs_ready (state, run_after, id),
    -- The reaper's scan: only expired leases, not every live one.
    KEY qchaos_jobs_lease (state, lease_until)
) ENGINE = InnoDB;

-- name: teardown
DROP TABLE IF EXISTS qchaos_jobs;

-- name: enqueue
INSERT INTO qchaos_jobs (payload, group_key, max_attempts, run_after)
VALUES (:payload, :group_key, COALESCE(CAST(:max_attempts AS SIGNED), 3),
        UTC_TIMESTAMP(6) + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND);
SELECT LAST_INSERT_ID() AS job_id;

-- name: claim
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT id AS job_id
FROM qchaos_jobs
WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(6)
ORDER BY run_after, id
LIMIT 1
FOR UPDATE SKIP LOCKED;
-- The parameter arrives as text; CAST gives INTERVAL a number.
UPDATE qchaos_jobs
SET state = 'inflight',
    token = UUID(),
    attempt = attempt + 1,
    lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND,
    locked_by = :worker
WHERE id = :job_id AND state = 'ready';
SELECT id AS job_id,
       token,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms,
       attempt,
       CAST(id AS CHAR) AS op_key,
       payload,
       group_key
FROM qchaos_jobs
WHERE id = :job_id AND state = 'inflight';

-- name: complete
-- autocommit: yes
UPDATE qchaos_jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id AND token = :token AND state = 'inflight';
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;

-- name: renew
UPDATE qchaos_jobs
SET lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND
WHERE id = :job_id AND token = :token AND state = 'inflight';
-- One row always (an aggregate): rows 1 when the UPDATE matched (the row
-- is ours and locked until COMMIT), else 0; tokens never come back, so a
-- row that did not match cannot match here.
SELECT COUNT(*) AS `rows`,
       MAX(token) AS token,
       MAX(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until)) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms
FROM qchaos_jobs
WHERE id = :job_id AND token = :token AND state = 'inflight';

-- name: fail
UPDATE qchaos_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'ready' END,
    run_after = UTC_TIMESTAMP(6)
                + INTERVAL COALESCE(CAST(:delay_ms AS SIGNED), 0) * 1000 MICROSECOND,
    token = NULL, lease_until = NULL, locked_by = NULL, last_error = :error
WHERE id = :job_id AND token = :token AND state = 'inflight';
SELECT ROW_COUNT() AS `rows`,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms;

-- name: reap
-- run_after is left alone: a recovered job keeps its place at the head of
-- the queue.  No expired lease (HAVING): the step ends here with no rows.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SELECT JSON_ARRAYAGG(JSON_OBJECT('id', id, 'token', token)) AS reaped
FROM qchaos_jobs FORCE INDEX (qchaos_jobs_lease)
WHERE state = 'inflight' AND lease_until < UTC_TIMESTAMP(6)
HAVING COUNT(*) > 0
FOR UPDATE SKIP LOCKED;
UPDATE qchaos_jobs j
JOIN JSON_TABLE(:reaped, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$.id')) r ON j.id = r.id
SET j.state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    j.last_error = CASE WHEN j.attempt >= j.max_attempts
                        THEN CONCAT('lease expired on attempt ', j.attempt)
                        ELSE j.last_error END,
    j.token = NULL, j.lease_until = NULL, j.locked_by = NULL
WHERE j.state = 'inflight';
SELECT r.id AS job_id, r.token, j.state,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms
FROM JSON_TABLE(:reaped, '$[*]'
                COLUMNS (id BIGINT UNSIGNED PATH '$.id', token CHAR(36) PATH '$.token')) r
JOIN qchaos_jobs j ON j.id = r.id
ORDER BY r.id;

-- name: snapshot
SELECT id AS job_id, state, attempt, token, last_error AS error
FROM qchaos_jobs
ORDER BY id;

-- name: monitor
SELECT COUNT(CASE WHEN state = 'ready' THEN 1 END) AS ready,
       COUNT(CASE WHEN state = 'inflight' THEN 1 END) AS inflight,
       COUNT(CASE WHEN state = 'inflight' AND lease_until < UTC_TIMESTAMP(6) THEN 1 END)
           AS expired,
       COUNT(CASE WHEN state = 'dead' THEN 1 END) AS dead,
       COUNT(CASE WHEN state = 'done' THEN 1 END) AS done,
       COALESCE(TIMESTAMPDIFF(MICROSECOND,
                              MIN(CASE WHEN state = 'ready' AND run_after <= UTC_TIMESTAMP(6)
                                       THEN run_after END),
                              UTC_TIMESTAMP(6)) DIV 1000, 0) AS oldest_ready_age_ms
FROM qchaos_jobs;

-- name: monitor_live
-- The live states only, each a range of an index whose first column is
-- state: O(live rows), the done range never read (issue 16).  Sampled
-- every monitor_interval_ms; the full monitor above every
-- monitor_full_interval_ms.
SELECT (SELECT COUNT(*) FROM qchaos_jobs WHERE state = 'ready') AS ready,
       (SELECT COUNT(*) FROM qchaos_jobs WHERE state = 'inflight') AS inflight,
       (SELECT COUNT(*) FROM qchaos_jobs
        WHERE state = 'inflight' AND lease_until < UTC_TIMESTAMP(6)) AS expired,
       (SELECT COUNT(*) FROM qchaos_jobs WHERE state = 'dead') AS dead,
       COALESCE(TIMESTAMPDIFF(MICROSECOND,
                              (SELECT MIN(run_after) FROM qchaos_jobs
                               WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(6)),
                              UTC_TIMESTAMP(6)) DIV 1000, 0) AS oldest_ready_age_ms;

-- name: server_pid
SELECT CONNECTION_ID() AS pid;

-- name: kill_session
-- MariaDB takes KILL's id as an expression, so it binds as a parameter.
KILL CONNECTION :pid;
