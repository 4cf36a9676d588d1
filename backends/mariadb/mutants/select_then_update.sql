-- qchaos MUTANT: claim as SELECT ... LIMIT 1 without FOR UPDATE, then a
-- separate UPDATE by id (no row lock, no state check), on MariaDB / MySQL.
-- Everything else is backends/mariadb/skip_locked.sql.
-- Must be caught by exclusive_claim.  Exposed by scenarios/default.ini.
-- engine: mariadb
-- model: lease
-- description: MUTANT select-then-update claim without a row lock
-- expect: exclusive_claim
-- scenario: scenarios/default.ini

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
-- The bug: read a ready job without any lock (a consistent read of the
-- transaction's snapshot), then update it by id.  Two workers that read the
-- same row both "win": the second UPDATE waits for the first to commit and
-- then overwrites its token and lease.
SELECT id AS job_id
FROM qchaos_jobs
WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(6)
ORDER BY run_after, id
LIMIT 1;
UPDATE qchaos_jobs
SET state = 'inflight',
    token = UUID(),
    attempt = attempt + 1,
    lease_until = UTC_TIMESTAMP(6) + INTERVAL CAST(:lease_ms AS SIGNED) * 1000 MICROSECOND,
    locked_by = :worker
WHERE id = :job_id;
SELECT id AS job_id,
       token,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', lease_until) / 1000 AS lease_until_ms,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000 AS now_ms,
       attempt,
       CAST(id AS CHAR) AS op_key,
       payload,
       group_key
FROM qchaos_jobs
WHERE id = :job_id;

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

-- name: server_pid
SELECT CONNECTION_ID() AS pid;

-- name: kill_session
-- MariaDB takes KILL's id as an expression, so it binds as a parameter.
KILL CONNECTION :pid;
