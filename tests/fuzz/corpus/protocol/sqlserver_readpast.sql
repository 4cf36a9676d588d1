-- qchaos protocol: SQL Server queue with UPDLOCK, READPAST, READCOMMITTEDLOCK
-- (shared/seeds/sqlserver-queue-readpast.txt).  The claim is one UPDATE of a
-- TOP (n) CTE under READ COMMITTED in autocommit: UPDLOCK coordinates
-- claimers, READPAST skips locked rows, READCOMMITTEDLOCK asks for locking
-- semantics even when the database uses read-committed snapshot; OUTPUT
-- returns the claimed rows and the fresh token (NEWID()).  Complete checks
-- job id AND token AND state, the reaper only takes back expired leases and
-- replaces the token.  Times: epoch ms of SYSUTCDATETIME() (server clock).
-- The seed captures OUTPUT INTO a table variable and SELECTs it; qchaos runs
-- each statement of a step as its own batch, so OUTPUT returns the rows
-- directly (same statement, same atomicity).
--
-- NOT TESTED HERE: this machine has no SQL Server.  Run it with
-- docker compose up -d sqlserver and the FreeTDS or Microsoft ODBC driver,
-- see README "SQL Server".
-- engine: sqlserver
-- model: lease
-- description: UPDLOCK/READPAST/READCOMMITTEDLOCK claim with OUTPUT, token-checked complete (untested here)
-- tested: NOT TESTED: no SQL Server on qchaos' build machine or in its CI; the file loads, no statement of it has run on a server

-- name: setup
IF OBJECT_ID('dbo.qchaos_jobs') IS NOT NULL DROP TABLE dbo.qchaos_jobs;
CREATE TABLE dbo.qchaos_jobs (
    JobId       bigint IDENTITY PRIMARY KEY,
    State       char(1) NOT NULL DEFAULT 'R',   -- R ready, W in flight, D done, X dead
    ClaimToken  uniqueidentifier NULL,
    LeaseUntil  datetime2(3) NULL,
    RunAfter    datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
    Attempt     int NOT NULL DEFAULT 0,
    MaxAttempts int NOT NULL DEFAULT 3,
    LockedBy    nvarchar(64) NULL,
    Payload     nvarchar(4000) NULL,
    GroupKey    nvarchar(64) NULL,
    LastError   nvarchar(4000) NULL
);
CREATE INDEX IX_qchaos_jobs_Ready ON dbo.qchaos_jobs (State, RunAfter, JobId);

-- name: teardown
IF OBJECT_ID('dbo.qchaos_jobs') IS NOT NULL DROP TABLE dbo.qchaos_jobs;

-- name: enqueue
INSERT INTO dbo.qchaos_jobs (Payload, GroupKey, MaxAttempts, RunAfter)
OUTPUT inserted.JobId AS job_id
VALUES (:payload, :group_key, CAST(:max_attempts AS int),
        DATEADD(millisecond, CAST(:delay_ms AS int), SYSUTCDATETIME()));

-- name: claim
-- autocommit: yes
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
WITH candidate AS (
    SELECT TOP (CAST(:batch AS int)) *
    FROM dbo.qchaos_jobs WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)
    WHERE State = 'R' AND RunAfter <= SYSUTCDATETIME()
    ORDER BY RunAfter, JobId
)
UPDATE candidate
SET State = 'W',
    ClaimToken = NEWID(),
    Attempt = Attempt + 1,
    LeaseUntil = DATEADD(millisecond, CAST(:lease_ms AS int), SYSUTCDATETIME()),
    LockedBy = :worker
OUTPUT inserted.JobId AS job_id,
       CAST(inserted.ClaimToken AS varchar(36)) AS token,
       DATEDIFF_BIG(millisecond, '1970-01-01', inserted.LeaseUntil) AS lease_until_ms,
       DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms,
       inserted.Attempt AS attempt,
       CAST(inserted.JobId AS varchar(20)) AS op_key,
       inserted.Payload AS payload,
       inserted.GroupKey AS group_key;

-- name: complete
UPDATE dbo.qchaos_jobs
SET State = 'D', LeaseUntil = NULL
OUTPUT DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms
WHERE JobId = CAST(:job_id AS bigint) AND ClaimToken = CAST(:token AS uniqueidentifier)
  AND State = 'W';

-- name: renew
UPDATE dbo.qchaos_jobs
SET LeaseUntil = DATEADD(millisecond, CAST(:lease_ms AS int), SYSUTCDATETIME())
OUTPUT CAST(inserted.ClaimToken AS varchar(36)) AS token,
       DATEDIFF_BIG(millisecond, '1970-01-01', inserted.LeaseUntil) AS lease_until_ms,
       DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms
WHERE JobId = CAST(:job_id AS bigint) AND ClaimToken = CAST(:token AS uniqueidentifier)
  AND State = 'W';

-- name: fail
UPDATE dbo.qchaos_jobs
SET State = CASE WHEN Attempt >= MaxAttempts THEN 'X' ELSE 'R' END,
    RunAfter = DATEADD(millisecond, CAST(:delay_ms AS int), SYSUTCDATETIME()),
    ClaimToken = NULL, LeaseUntil = NULL, LockedBy = NULL, LastError = :error
OUTPUT DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms
WHERE JobId = CAST(:job_id AS bigint) AND ClaimToken = CAST(:token AS uniqueidentifier)
  AND State = 'W';

-- name: reap
UPDATE dbo.qchaos_jobs WITH (READPAST)
SET State = CASE WHEN Attempt >= MaxAttempts THEN 'X' ELSE 'R' END,
    LastError = CASE WHEN Attempt >= MaxAttempts
                     THEN CONCAT('lease expired on attempt ', Attempt) ELSE LastError END,
    ClaimToken = NULL, LeaseUntil = NULL, LockedBy = NULL
OUTPUT inserted.JobId AS job_id,
       CAST(deleted.ClaimToken AS varchar(36)) AS token,
       CASE inserted.State WHEN 'X' THEN 'dead' ELSE 'ready' END AS state,
       DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms
WHERE State = 'W' AND LeaseUntil < SYSUTCDATETIME();

-- name: snapshot
SELECT JobId AS job_id,
       CASE State WHEN 'R' THEN 'ready' WHEN 'W' THEN 'inflight' WHEN 'D' THEN 'done'
                  ELSE 'dead' END AS state,
       Attempt AS attempt,
       CAST(ClaimToken AS varchar(36)) AS token,
       LastError AS error
FROM dbo.qchaos_jobs
ORDER BY JobId;

-- name: monitor
SELECT COALESCE(SUM(CASE WHEN State = 'R' THEN 1 ELSE 0 END), 0) AS ready,
       COALESCE(SUM(CASE WHEN State = 'W' THEN 1 ELSE 0 END), 0) AS inflight,
       COALESCE(SUM(CASE WHEN State = 'W' AND LeaseUntil < SYSUTCDATETIME() THEN 1 ELSE 0 END), 0) AS expired,
       COALESCE(SUM(CASE WHEN State = 'X' THEN 1 ELSE 0 END), 0) AS dead,
       COALESCE(SUM(CASE WHEN State = 'D' THEN 1 ELSE 0 END), 0) AS done,
       COALESCE(DATEDIFF_BIG(millisecond,
                MIN(CASE WHEN State = 'R' AND RunAfter <= SYSUTCDATETIME() THEN RunAfter END),
                SYSUTCDATETIME()), 0) AS oldest_ready_age_ms
FROM dbo.qchaos_jobs;

-- name: server_pid
SELECT @@SPID AS pid;
