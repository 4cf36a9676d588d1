// graphile_worker.js - qchaos adapter for graphile-worker 0.17 (docs/adapters.md).
//
// The library runs its own worker (run(): fetch, task, complete or fail,
// its own retry schedule).  The adapter only watches: the library's SQL
// functions batchGetJobs, batchCompleteJobs and batchFailJobs (dist/sql/*.js,
// called through their module objects, so replacing the export is seen) are
// wrapped; each wrapper tells qchaos the request and its answer and returns
// (or throws) what the library's function did.  The answer's row count comes
// from the library's own query, read through the client handed to it.
//
// What graphile-worker exposes: a claim writes locked_by (the worker pool's
// id, one per process) and locked_at = now() (sql/getJobs.js); the adapter
// reports "locked_by@locked_at ms" as the token.  Its lock has no lease
// other than 4 hours (sql/resetLockedAt.js: locked_at < now() - 4 hours), so
// lease_until is locked_at + 4 h.  complete is DELETE by id alone
// (sql/completeJobs.js); fail checks locked_by (sql/failJobs.js).
'use strict'

const qc = require('./qchaos')
const pg = require('pg')
const { run, makeWorkerUtils, Logger } = require('graphile-worker')
const getJobs = require('graphile-worker/dist/sql/getJobs')
const completeJobs = require('graphile-worker/dist/sql/completeJobs')
const failJobs = require('graphile-worker/dist/sql/failJobs')
const { version } = require('graphile-worker/package.json')

const { env } = qc
const SCHEMA = 'qchaos_graphile'
const LOCK_MS = 4 * 3600 * 1000

// the library logs to stdout by default: qchaos's channel; logs go to stderr
const logger = new Logger(() => (level, message) => process.stderr.write(`[${env.appName}] ${level}: ${message}\n`))

const qcId = (job) => job && job.payload && job.payload.qc_id

// A withPgClient whose clients report each query's rowCount to rows[].
function counting (withPgClient, rows) {
  const wrap = (w) => (fn) => w((client) => fn(new Proxy(client, {
    get (target, prop) {
      if (prop === 'query') {
        return async (...args) => {
          const r = await target.query(...args)
          rows.push(r.rowCount)
          return r
        }
      }
      const v = target[prop]
      return typeof v === 'function' ? v.bind(target) : v
    }
  })))
  const out = wrap(withPgClient)
  if (withPgClient.withRetries) out.withRetries = wrap(withPgClient.withRetries)
  return out
}

const origGet = getJobs.batchGetJobs
getJobs.batchGetJobs = async function (ctx, withPgClient, tasks, poolId, flags, size) {
  qc.send({ type: 'fetching' })
  const jobs = await origGet.apply(this, arguments)
  if (!jobs || jobs.length === 0) qc.send({ type: 'polled', rows: 0 })
  return jobs
}

function wrapEnd (mod, fname, op, jobOf) {
  const orig = mod[fname]
  mod[fname] = async function (opts, withPgClient, poolId, items) {
    const jobs = items.map(jobOf).filter((j) => qcId(j) != null)
    for (const j of jobs) await qc.ask({ type: op === 'complete' ? 'completing' : 'failing', job: qcId(j) }, 'go')
    const rows = []
    const args = [...arguments]
    args[1] = counting(withPgClient, rows)
    try {
      await orig.apply(this, args)
    } catch (err) {
      for (const j of jobs) qc.send({ type: op === 'complete' ? 'completed' : 'failed', job: qcId(j), outcome: qc.outcomeOf(err), error: String(err.message) })
      throw err
    }
    const known = items.length === 1 && rows.length === 1
    for (const j of jobs) qc.send({ type: op === 'complete' ? 'completed' : 'failed', job: qcId(j), rows: known ? rows[0] : undefined })
  }
}
wrapEnd(completeJobs, 'batchCompleteJobs', 'complete', (job) => job)
wrapEnd(failJobs, 'batchFailJobs', 'fail', (spec) => spec.job)

function pool () {
  return new pg.Pool({
    host: process.env.PGHOST || process.env.PGHOSTADDR,
    port: Number(process.env.PGPORT || 5432),
    user: process.env.PGUSER,
    password: process.env.PGPASSWORD,
    database: process.env.PGDATABASE,
    application_name: env.appName,
    max: 4
  })
}

async function main () {
  const pgPool = pool()
  // error handlers on the pool and on every client, as graphile-worker asks
  // (https://err.red/wpeh): an idle client cut by the server must not crash us
  pgPool.on('error', (e) => qc.log('pool error:', e.message))
  pgPool.on('connect', (client) => client.on('error', (e) => qc.log('client error:', e.message)))
  if (env.role !== 'worker') {
    const utils = await makeWorkerUtils({ pgPool, schema: SCHEMA, logger })
    await utils.migrate()
    qc.on('enqueue', async (msg) => {
      const out = []
      for (const j of msg.jobs) {
        const job = await utils.addJob('qchaos', { qc_id: j.job, payload: j.payload }, { maxAttempts: env.maxAttempts })
        // what was enqueued, so that a completed job (deleted) shows as done
        await pgPool.query('INSERT INTO qchaos.adapter_enqueued (job_id, lib_id) VALUES ($1, $2)', [j.job, String(job.id)])
        out.push({ job: j.job, lib_id: String(job.id) })
      }
      qc.send({ type: 'enqueued', jobs: out })
    })
    qc.on('stop', async () => {
      await utils.release()
      await pgPool.end()
      process.exit(0)
    })
    qc.send({ type: 'hello', library: 'graphile-worker', version, exposes: ['attempt', 'token', 'now_ms', 'lease_until_ms', 'rows'] })
    return
  }
  qc.send({ type: 'hello', library: 'graphile-worker', version, exposes: ['attempt', 'token', 'now_ms', 'lease_until_ms', 'rows'] })
  const runner = await run({
    pgPool,
    schema: SCHEMA,
    logger,
    concurrency: 1,
    pollInterval: env.pollMs,
    noHandleSignals: true,
    noPreparedStatements: false,
    taskList: {
      qchaos: async (payload, helpers) => {
        const job = helpers.job
        const locked = new Date(job.locked_at).getTime()
        await qc.runJob({
          job: payload.qc_id,
          lib_id: String(job.id),
          attempt: job.attempts,
          token: `${job.locked_by}@${locked}`,
          now_ms: locked,
          lease_until_ms: locked + LOCK_MS
        })
      }
    }
  })
  qc.on('stop', async () => {
    await runner.stop()
    await pgPool.end()
    process.exit(0)
  })
}

main().catch((e) => {
  qc.log('graphile-worker adapter failed:', e.stack || e)
  process.exit(1)
})
