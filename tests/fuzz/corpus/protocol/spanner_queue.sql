-- qchaos protocol: Spanner queue (shared/seeds/spanner-queues.txt), in the
-- PostgreSQL dialect through PGAdapter, with the libpq driver.
-- Receive with a lease token (spanner.receive_<queue>), renewlease that
-- rotates the token (the old one is rejected from then on), DELETE as ack.
-- Spanner keeps no row for an acknowledged message, so a bookkeeping table
-- (qchaos_log) records done / dead for the snapshot; it is written in the
-- same transaction as the ack.  Spanner's own lease is 10 s (it cannot be
-- set), so run it with [lease] lease_ms = 10000.  Spanner redelivers on
-- lease expiry by itself: there is no reap statement.  The ack is keyed by
-- message id, not by lease token (as the seed shows), so a stalled worker's
-- late ack is accepted: expect stale_token_rejected to say so under the
-- stall scenario; Spanner's answer is idempotent processing.
--
-- NOT TESTED HERE: this machine cannot reach Spanner or PGAdapter.  The
-- statements follow the seed; names of the receive/renew functions and
-- the ASSERT_ROWS_MODIFIED clause are Spanner's.
-- engine: spanner
-- model: lease
-- description: Spanner queue via PGAdapter: receive with lease token, renewlease, delete as ack (untested here)
-- tested: NOT TESTED: no Spanner or PGAdapter reachable from qchaos' build machine or its CI; the file loads, no statement of it has run

-- name: setup
CREATE QUEUE IF NOT EXISTS qchaos_jobs (
    jobid     bigint NOT NULL,
    messageid varchar(36) NOT NULL,
    payload   bytea NOT NULL,
    PRIMARY KEY (jobid, messageid)
);
CREATE TABLE IF NOT EXISTS qchaos_log (
    jobid      bigint NOT NULL PRIMARY KEY,
    state      varchar NOT NULL,
    attempt    bigint NOT NULL,
    last_error varchar
);

-- name: teardown
DROP TABLE IF EXISTS qchaos_log;
DROP QUEUE IF EXISTS qchaos_jobs;

-- name: enqueue
INSERT INTO qchaos_log (jobid, state, attempt)
VALUES ((SELECT coalesce(max(jobid), 0) + 1 FROM qchaos_log), 'ready', 0)
RETURNING jobid AS job_id;
INSERT INTO qchaos_jobs (jobid, messageid, payload, deliver_time)
VALUES (:job_id, spanner.generate_uuid(), convert_to(coalesce(:payload, ''), 'UTF8'),
        now() + make_interval(secs => :delay_ms::bigint / 1000.0))
RETURNING jobid AS job_id;

-- name: claim
SELECT jobid AS job_id,
       spanner_lease_token AS token,
       (extract(epoch FROM spanner_lease_expiration_timestamp) * 1000)::float8 AS lease_until_ms,
       (extract(epoch FROM now()) * 1000)::float8 AS now_ms,
       1 AS attempt,
       messageid AS op_key,
       convert_from(payload, 'UTF8') AS payload,
       NULL::varchar AS group_key
FROM spanner.receive_qchaos_jobs(:batch::bigint, NULL, '1s');

-- name: complete
DELETE FROM qchaos_jobs WHERE jobid = :job_id::bigint AND messageid = :op_key
RETURNING jobid AS job_id;
UPDATE qchaos_log SET state = 'done' WHERE jobid = :job_id::bigint
RETURNING 1 AS rows, (extract(epoch FROM now()) * 1000)::float8 AS now_ms;

-- name: renew
SELECT spanner_new_lease_token AS token,
       (extract(epoch FROM spanner_lease_expiration_timestamp) * 1000)::float8 AS lease_until_ms,
       CASE WHEN spanner_new_lease_token IS NULL THEN 0 ELSE 1 END AS rows
FROM spanner.renewlease_qchaos_jobs(ARRAY[:token]);

-- name: snapshot
SELECT jobid AS job_id, state, attempt, NULL::varchar AS token, last_error AS error
FROM qchaos_log
ORDER BY jobid;

-- name: monitor
SELECT count(*) FILTER (WHERE state = 'ready') AS ready,
       0 AS inflight,
       0 AS expired,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       count(*) FILTER (WHERE state = 'done') AS done,
       0 AS oldest_ready_age_ms
FROM qchaos_log;
