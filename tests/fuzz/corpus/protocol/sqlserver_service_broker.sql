-- qchaos protocol: SQL Server Service Broker queue, transaction model
-- (shared/seeds/sqlserver-service-broker-conversation-locks.txt).
--
-- Jobs travel as Service Broker messages; a state table beside the queue
-- keeps each job's state, attempt and token, as the seed's applications
-- keep their state table.  The claim is a RECEIVE inside the claim's
-- transaction (qchaos opens it before the claim and commits it after the
-- complete or fail): RECEIVE takes the conversation group lock of the
-- messages it returns and holds it until that transaction ends, so no other
-- reader can receive a message of the same conversation group meanwhile,
-- and the state row is updated under that lock.  A worker that dies has its
-- transaction rolled back by the server: the message is back on the queue
-- and the state row back to ready, at once (no lease, no reaper).
--
-- Groups.  Jobs with a group key are sent on one conversation per key (the
-- dialog handle is kept in dbo.qchaos_sb_dialogs), so they share one
-- conversation group on the receiving side: RECEIVE hands them out one
-- reader at a time and in the order they were sent (group_exclusive,
-- group_order).  A job without a group key gets its own dialog, ended by
-- its complete.  RECEIVE TOP (:batch) returns messages of one conversation
-- group only.
--
-- What Service Broker does not give, said plainly:
--   - no delayed delivery: a job enqueued with a delay, or retried by fail,
--     is due at once (delay_ms is ignored; do not judge idle pickups);
--   - a retried job (fail) is sent again as a new message, so it goes to
--     the end of its group's conversation;
--   - the queue is created with POISON_MESSAGE_HANDLING (STATUS = OFF): with
--     the default ON, five rolled-back RECEIVE transactions in a row (a
--     kill_after_claim scenario does that) would disable the queue.  As in
--     every transaction-model protocol, a job that crashes its worker every
--     time is retried forever (its attempt rolls back with it);
--   - the initiator side never ends a dialog and dialogs have no lifetime,
--     so the target queue only ever holds DEFAULT messages.  An Error or
--     EndDialog message there (from a dialog ended by hand) would make the
--     claim return no row and roll back, again and again: end such a
--     conversation WITH CLEANUP.
-- T-SQL variables live for one batch, so every step that needs them is one
-- batch ("-- split: no"); SET XACT_ABORT ON makes any error abort the batch
-- and its transaction instead of going on half done.  Times: epoch ms of
-- SYSUTCDATETIME() (server clock).
--
-- NOT TESTED HERE: this machine has no SQL Server.  Run it with
-- docker compose up -d sqlserver and the FreeTDS or Microsoft ODBC driver,
-- see README "SQL Server"; the transaction-model kill scenarios
-- (kill_after_claim.ini) are the ones it is written for.
-- engine: sqlserver
-- model: transaction
-- description: Service Broker RECEIVE in the claim's transaction, conversation group locks (untested here)
-- tested: NOT TESTED: no SQL Server on qchaos' build machine or in its CI; the file loads, no statement of it has run on a server

-- name: setup
-- autocommit: yes
IF (SELECT is_broker_enabled FROM sys.databases WHERE name = DB_NAME()) = 0
    ALTER DATABASE CURRENT SET ENABLE_BROKER WITH ROLLBACK IMMEDIATE;
-- (qchaos runs teardown before setup: nothing of an earlier run is left)
CREATE QUEUE dbo.qchaos_target_q WITH STATUS = ON, POISON_MESSAGE_HANDLING (STATUS = OFF);
CREATE QUEUE dbo.qchaos_initiator_q;
CREATE SERVICE qchaos_target ON QUEUE dbo.qchaos_target_q ([DEFAULT]);
CREATE SERVICE qchaos_initiator ON QUEUE dbo.qchaos_initiator_q;
CREATE TABLE dbo.qchaos_sb_jobs (
    JobId        bigint IDENTITY PRIMARY KEY,
    State        char(1) NOT NULL DEFAULT 'R',   -- R ready, W in flight, D done, X dead
    Attempt      int NOT NULL DEFAULT 0,
    MaxAttempts  int NOT NULL DEFAULT 3,
    ClaimToken   uniqueidentifier NULL,
    Conversation uniqueidentifier NULL,          -- the receiving side's handle
    LockedBy     nvarchar(64) NULL,
    Payload      nvarchar(4000) NULL,
    GroupKey     nvarchar(64) NULL,
    LastError    nvarchar(4000) NULL,
    ReadySince   datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME()
);
CREATE TABLE dbo.qchaos_sb_dialogs (
    GroupKey nvarchar(64) PRIMARY KEY,
    Handle   uniqueidentifier NOT NULL           -- the sending side's handle
);

-- name: teardown
-- autocommit: yes
IF EXISTS (SELECT 1 FROM sys.services WHERE name = 'qchaos_target') DROP SERVICE qchaos_target;
IF EXISTS (SELECT 1 FROM sys.services WHERE name = 'qchaos_initiator') DROP SERVICE qchaos_initiator;
IF OBJECT_ID('dbo.qchaos_target_q') IS NOT NULL DROP QUEUE dbo.qchaos_target_q;
IF OBJECT_ID('dbo.qchaos_initiator_q') IS NOT NULL DROP QUEUE dbo.qchaos_initiator_q;
IF OBJECT_ID('dbo.qchaos_sb_jobs') IS NOT NULL DROP TABLE dbo.qchaos_sb_jobs;
IF OBJECT_ID('dbo.qchaos_sb_dialogs') IS NOT NULL DROP TABLE dbo.qchaos_sb_dialogs;

-- name: enqueue
-- split: no
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @id bigint, @h uniqueidentifier, @gk nvarchar(64) = :group_key;
BEGIN TRANSACTION;
INSERT INTO dbo.qchaos_sb_jobs (Payload, GroupKey, MaxAttempts)
VALUES (:payload, @gk, CAST(:max_attempts AS int));
SET @id = SCOPE_IDENTITY();
IF @gk IS NOT NULL
    SELECT @h = Handle FROM dbo.qchaos_sb_dialogs WITH (UPDLOCK, HOLDLOCK) WHERE GroupKey = @gk;
IF @h IS NULL
BEGIN
    BEGIN DIALOG CONVERSATION @h
        FROM SERVICE qchaos_initiator TO SERVICE 'qchaos_target' ON CONTRACT [DEFAULT]
        WITH ENCRYPTION = OFF;
    IF @gk IS NOT NULL
        INSERT INTO dbo.qchaos_sb_dialogs (GroupKey, Handle) VALUES (@gk, @h);
END
SEND ON CONVERSATION @h MESSAGE TYPE [DEFAULT] (CAST(@id AS varbinary(8)));
COMMIT;
SELECT @id AS job_id;

-- name: claim
-- split: no
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @batch int = CAST(:batch AS int), @opened bigint;
DECLARE @m TABLE (conv uniqueidentifier, mtype sysname, body varbinary(max));
-- qchaos opened the claim's transaction by turning ODBC autocommit off,
-- which SQL Server drivers do with IMPLICIT_TRANSACTIONS ON: the
-- transaction starts with the first statement that is on the documented
-- list, and RECEIVE is not on it.  A SELECT from a table is, so this one
-- makes sure RECEIVE runs inside the transaction a kill rolls back.
SELECT TOP (0) @opened = JobId FROM dbo.qchaos_sb_jobs;
RECEIVE TOP (@batch) conversation_handle, message_type_name, message_body
FROM dbo.qchaos_target_q INTO @m;
-- No state condition: a message for a job that is not ready would be a
-- second delivery, which qchaos must see, not hide.
UPDATE j
SET State = 'W', Attempt = j.Attempt + 1, ClaimToken = NEWID(), Conversation = m.conv,
    LockedBy = :worker
OUTPUT inserted.JobId AS job_id,
       CAST(inserted.ClaimToken AS varchar(36)) AS token,
       DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms,
       inserted.Attempt AS attempt,
       CAST(inserted.JobId AS varchar(20)) AS op_key,
       inserted.Payload AS payload,
       inserted.GroupKey AS group_key
FROM dbo.qchaos_sb_jobs AS j
JOIN @m AS m ON j.JobId = CAST(m.body AS bigint)
WHERE m.mtype = N'DEFAULT';

-- name: complete
-- split: no
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @conv uniqueidentifier, @gk nvarchar(64), @n int;
UPDATE dbo.qchaos_sb_jobs
SET State = 'D', @conv = Conversation, @gk = GroupKey, LockedBy = NULL
WHERE JobId = CAST(:job_id AS bigint) AND ClaimToken = CAST(:token AS uniqueidentifier)
  AND State = 'W';
SET @n = @@ROWCOUNT;
-- a job's own dialog is done; a group's dialog carries its next jobs
IF @n > 0 AND @gk IS NULL
    END CONVERSATION @conv;
SELECT @n AS [rows], DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms;

-- name: fail
-- split: no
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @conv uniqueidentifier, @gk nvarchar(64), @state char(1), @id bigint, @n int,
        @h uniqueidentifier;
UPDATE dbo.qchaos_sb_jobs
SET @state = State = CASE WHEN Attempt >= MaxAttempts THEN 'X' ELSE 'R' END,
    @conv = Conversation, @gk = GroupKey, @id = JobId,
    ClaimToken = NULL, Conversation = NULL, LockedBy = NULL, LastError = :error,
    ReadySince = SYSUTCDATETIME()
WHERE JobId = CAST(:job_id AS bigint) AND ClaimToken = CAST(:token AS uniqueidentifier)
  AND State = 'W';
SET @n = @@ROWCOUNT;
-- RECEIVE consumed the message: a retry needs a new one (due at once)
IF @n > 0 AND @state = 'R'
BEGIN
    IF @gk IS NOT NULL
        SELECT @h = Handle FROM dbo.qchaos_sb_dialogs WITH (UPDLOCK, HOLDLOCK) WHERE GroupKey = @gk;
    IF @h IS NULL
        BEGIN DIALOG CONVERSATION @h
            FROM SERVICE qchaos_initiator TO SERVICE 'qchaos_target' ON CONTRACT [DEFAULT]
            WITH ENCRYPTION = OFF;
    SEND ON CONVERSATION @h MESSAGE TYPE [DEFAULT] (CAST(@id AS varbinary(8)));
END
IF @n > 0 AND @gk IS NULL
    END CONVERSATION @conv;
SELECT @n AS [rows],
       CASE @state WHEN 'X' THEN 'dead' WHEN 'R' THEN 'ready' END AS state,
       DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME()) AS now_ms;

-- name: snapshot
SELECT JobId AS job_id,
       CASE State WHEN 'R' THEN 'ready' WHEN 'W' THEN 'inflight' WHEN 'D' THEN 'done'
                  ELSE 'dead' END AS state,
       Attempt AS attempt,
       CAST(ClaimToken AS varchar(36)) AS token,
       LastError AS error
FROM dbo.qchaos_sb_jobs
ORDER BY JobId;

-- name: monitor
-- Read with NOLOCK: in-flight rows are locked by their claims' open
-- transactions; a progress sample may read them uncommitted rather than
-- wait for them or skip them.
SELECT COALESCE(SUM(CASE WHEN State = 'R' THEN 1 ELSE 0 END), 0) AS ready,
       COALESCE(SUM(CASE WHEN State = 'W' THEN 1 ELSE 0 END), 0) AS inflight,
       0 AS expired,
       COALESCE(SUM(CASE WHEN State = 'X' THEN 1 ELSE 0 END), 0) AS dead,
       COALESCE(SUM(CASE WHEN State = 'D' THEN 1 ELSE 0 END), 0) AS done,
       COALESCE(DATEDIFF_BIG(millisecond,
                MIN(CASE WHEN State = 'R' THEN ReadySince END),
                SYSUTCDATETIME()), 0) AS oldest_ready_age_ms
FROM dbo.qchaos_sb_jobs WITH (NOLOCK);

-- name: server_pid
SELECT @@SPID AS pid;

-- name: kill_session
-- split: no
DECLARE @kill nvarchar(40) = N'KILL ' + CAST(CAST(:pid AS int) AS nvarchar(12));
EXEC (@kill);
SELECT 1 AS killed;
