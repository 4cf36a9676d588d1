-- qchaos MUTANT: the renew picks its row in an unlocked CTE, then writes by id
-- Must be caught by: exclusive_claim.  Exposed by: scenarios/scripts/renew_meets_reap_commit.ini.
-- A protocol written by a reviewer of the gate (stop of 2026-12-08), which
-- the whole gate passed: the renew is written in the claim's shape (a CTE
-- that picks the row, then UPDATE ... FROM it), but the CTE takes no row
-- lock.  Under READ COMMITTED the CTE reads the statement's snapshot; when
-- the reaper returns the expired lease in a transaction that commits
-- while the renew runs, the UPDATE waits for the row and then re-checks
-- only its own WHERE (j.id = mine.id) on the newest version, not the
-- CTE's token and state: it extends the lease of a job that is ready
-- again, and its stale worker goes on while the next claim hands the job
-- to another.  A one-statement reap's window is one statement's run time;
-- the script holds the reap before its COMMIT (hold_reap_commit).
-- engine: postgres
-- model: lease
-- description: MUTANT renew via an unlocked CTE and UPDATE ... FROM (token and state checked on the old snapshot only)
-- expect: exclusive_claim
-- scenario: scenarios/scripts/renew_meets_reap_commit.ini
-- base: ../skip_locked.sql

-- name: renew
WITH mine AS (
    SELECT id
    FROM qchaos.jobs
    WHERE id = :job_id::bigint AND token = :token::uuid AND state = 'inflight'
)
UPDATE qchaos.jobs j
SET lease_until = clock_timestamp() + make_interval(secs => :lease_ms::int / 1000.0)
FROM mine
WHERE j.id = mine.id
RETURNING j.token::text AS token,
          (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_until_ms,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms;

