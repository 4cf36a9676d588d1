-- A library file for tests/adapters/broken.js: nothing to set up, an empty
-- snapshot (the runs it serves stop at the adapter's broken line).
-- engine: postgres
-- model: adapter
-- description: tests only: the broken adapter's (empty) table

-- name: setup
CREATE SCHEMA IF NOT EXISTS qchaos;

-- name: teardown
SELECT 1;

-- name: snapshot
SELECT 1::bigint AS job_id, 'ready' AS state, 0 AS attempt, NULL::text AS token WHERE false;
