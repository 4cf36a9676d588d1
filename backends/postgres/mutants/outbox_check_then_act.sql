-- qchaos MUTANT: the outbox deduplicates by check-then-act (shared/cases.md
-- C23; NServiceBus #6583, #4086, docs.particular.net #3552).  A copy looks
-- up the message's outbox record; finding none, it runs its handler, and
-- the record is inserted only with the business data, at complete.  Two
-- copies of one message claimed at about the same time both find no
-- record and both run the handler: its effect is applied twice.  (In
-- NServiceBus the second commit fails on the record's key, the copy is
-- retried and then skipped; here the insert does nothing on the conflict:
-- the same end state, one record, two effects.)  Sequential redelivery is
-- safe, concurrent copies are not.
-- Must be caught by: message_once.  Exposed by:
-- scenarios/cases/c23_outbox_copies.ini (200 messages x 2 adjacent copies,
-- 4 workers, 20-50 ms handlers, a plain sink).
-- engine: postgres
-- model: lease
-- description: MUTANT outbox check-then-act: SELECT the record, run, insert it at complete (C23)
-- expect: message_once
-- scenario: scenarios/cases/c23_outbox_copies.ini
-- base: ../outbox.sql

-- name: dedup
SELECT NOT EXISTS (SELECT 1 FROM qchaos.outbox WHERE message_id = :message_id::uuid) AS run;

-- name: complete
INSERT INTO qchaos.outbox (message_id, job_id)
VALUES (:message_id::uuid, :job_id::bigint)
ON CONFLICT (message_id) DO NOTHING;
UPDATE qchaos.jobs
SET state = 'done', lease_until = NULL, locked_by = NULL
WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;
