-- MUTANT (issue 17, shared/cases.md C28: Oban #702, #832): the enqueue
-- notifies a channel no worker listens on (qchaos_job, not qchaos_jobs),
-- as when NOTIFY and LISTEN disagree, or LISTEN went through a
-- transaction-mode pooler and never reached the server: idle workers are
-- never woken and jobs wait for the fallback poll.  With the slow fallback
-- of scenarios/listen_slow_poll.ini, bounded_idle_polling's wake-up rule
-- must fail: jobs not claimed within max_pickup_ms while workers slept on
-- their fallback timers with no notification.
-- engine: postgres
-- model: lease
-- description: notify on another channel than the workers LISTEN on: idle workers are never woken
-- base: ../skip_locked_listen.sql
-- expect: bounded_idle_polling
-- scenario: scenarios/listen_slow_poll.ini

-- name: notify
SELECT pg_notify('qchaos_job', :job_id::text);
