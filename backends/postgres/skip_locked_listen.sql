-- qchaos protocol: skip_locked.sql with LISTEN/NOTIFY wake-ups (issue 17,
-- shared/cases.md C28: Oban #702 and #832).  Every step of skip_locked.sql
-- (an overlay of it), plus:
--   listen: run once by each worker incarnation on a second connection of
--           its own; after an empty claim the worker waits there for a
--           notification, with the fallback poll of [idle] listen_poll_ms,
--           and after a lost listen connection it polls at the idle
--           policy's rate and LISTENs again (claiming at once: a job
--           enqueued before the LISTEN sent it nothing);
--   notify: run by the enqueuer after each enqueue in the same transaction,
--           so the notification is delivered at the commit that makes the
--           job claimable (PostgreSQL queues NOTIFY until COMMIT), never
--           before.
-- engine: postgres
-- model: lease
-- description: SKIP LOCKED queue whose idle workers wait on LISTEN qchaos_jobs (NOTIFY in the enqueue's transaction) with a fallback poll
-- base: skip_locked.sql
-- tested: qchaos, PostgreSQL 15: scenarios/listen.ini and listen_slow_poll.ini (listen connections terminated and dropped every few hundred ms, notifications lost or sent before the commit)

-- name: listen
LISTEN qchaos_jobs;

-- name: notify
SELECT pg_notify('qchaos_jobs', :job_id::text);
