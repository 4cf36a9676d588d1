-- qchaos MUTANT: group claim past a locked head (checks in-flight siblings only, not the group's head)
-- Must be caught by: group_exclusive, group_order.  Exposed by: scenarios/scripts/group_head_race.ini.
-- engine: postgres
-- model: lease
-- description: MUTANT group claim checks in-flight siblings only (snapshot), not the FIFO head
-- expect: group_exclusive, group_order
-- scenario: scenarios/scripts/group_head_race.ini
-- base: ../group_fifo.sql
--
-- The bug (breaker B20; shared/cases.md C14): the group claim only checks
-- that no sibling is IN FLIGHT (in its snapshot), not that it is the group's
-- oldest ready job.  A claimer that SKIP LOCKs past the head of a group (held
-- by a claim not yet committed) takes the group's next job: two jobs of one
-- group run at once, and out of order.  grouped.ini shows it only by chance
-- (seeds 1-8: FAIL on 1, 3, 5, 6); group_head_race.ini holds the head's
-- claim at claim.commit while another worker claims, every time.

-- name: claim
WITH picked AS (
    SELECT j.id
    FROM qchaos.jobs j
    WHERE j.state = 'ready' AND j.run_after <= now()
      AND (j.group_key IS NULL
           OR NOT EXISTS (SELECT 1 FROM qchaos.jobs o
                          WHERE o.group_key = j.group_key AND o.state = 'inflight'))
    ORDER BY j.run_after, j.id
    FOR UPDATE OF j SKIP LOCKED
    LIMIT :batch::int
)
UPDATE qchaos.jobs j
SET state = 'inflight', token = gen_random_uuid(), attempt = j.attempt + 1,
    lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0),
    locked_by = :worker
FROM picked WHERE j.id = picked.id
RETURNING j.id AS job_id, j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
          j.attempt, j.id::text AS op_key, j.payload, j.group_key;
