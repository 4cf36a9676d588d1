// pgboss.js - qchaos adapter for pg-boss 10 (docs/adapters.md).
//
// The library runs its own worker loop (boss.work: fetch, handler, complete
// or fail, its own expiry by supervise/maintain).  The adapter only watches:
// Manager.prototype.fetch, .complete and .fail are wrapped so that each
// request the library sends and the answer it gets are told to qchaos; the
// wrappers call the library's own function and return (or throw) exactly
// what it returned (or threw), so the library behaves as it does unwatched.
//
// What pg-boss exposes: no claim token (its complete and fail match id and
// state only: src/plans.js completeJobs, failJobsById), so the adapter
// reports the claim's started_on (set to now() by every fetch: fetchNextJob)
// in epoch ms as the token: the claim's own name, which the library does not
// check.  The lease is started_on + expire_in (failJobsByTimeout).
'use strict'

const qc = require('./qchaos')
const PgBoss = require('pg-boss')
const Manager = require('pg-boss/src/manager')
const { version } = require('pg-boss/package.json')

const { env } = qc
const SCHEMA = 'qchaos_pgboss'

// job ids of pg-boss -> what qchaos knows of the claim
const inHand = new Map()

function conn () {
  return {
    host: process.env.PGHOST || process.env.PGHOSTADDR,
    port: Number(process.env.PGPORT || 5432),
    user: process.env.PGUSER,
    password: process.env.PGPASSWORD,
    database: process.env.PGDATABASE,
    application_name: env.appName
  }
}

const origFetch = Manager.prototype.fetch
Manager.prototype.fetch = async function (name, options) {
  if (name === env.queue) qc.send({ type: 'fetching' })
  const jobs = await origFetch.apply(this, arguments)
  if (name === env.queue && jobs.length === 0) qc.send({ type: 'polled', rows: 0 })
  return jobs
}

function wrapEnd (orig, op) {
  return async function (name, id, data, options) {
    const ids = Array.isArray(id) ? id : [id]
    const jobs = name === env.queue ? ids.map((i) => inHand.get(i)).filter(Boolean) : []
    for (const j of jobs) await qc.ask({ type: op === 'complete' ? 'completing' : 'failing', job: j.job }, 'go')
    let result
    try {
      result = await orig.apply(this, arguments)
    } catch (err) {
      for (const j of jobs) {
        qc.send({ type: op === 'complete' ? 'completed' : 'failed', job: j.job, outcome: qc.outcomeOf(err), error: String(err.message) })
      }
      throw err
    }
    // affected counts the ids in the statement; with one id it is that job's
    for (const j of jobs) {
      qc.send({ type: op === 'complete' ? 'completed' : 'failed', job: j.job, rows: ids.length === 1 ? result.affected : undefined })
      inHand.delete(j.libId)
    }
    return result
  }
}
Manager.prototype.complete = wrapEnd(Manager.prototype.complete, 'complete')
Manager.prototype.fail = wrapEnd(Manager.prototype.fail, 'fail')

async function main () {
  const worker = env.role === 'worker'
  const boss = new PgBoss({
    ...conn(),
    schema: SCHEMA,
    max: 3,
    migrate: !worker, // the enqueuer creates the schema; workers find it
    schedule: false,
    supervise: worker, // expiry (maintain) runs in the workers
    maintenanceIntervalSeconds: 1
  })
  boss.on('error', (e) => qc.log('pg-boss error:', e.message))
  await boss.start()

  if (!worker) {
    await boss.createQueue(env.queue)
    qc.on('enqueue', async (msg) => {
      const out = []
      for (const j of msg.jobs) {
        const libId = await boss.send(env.queue, { qc_id: j.job, payload: j.payload }, {
          retryLimit: Math.max(0, env.maxAttempts - 1),
          retryDelay: Math.round(env.retryDelayMs / 1000),
          retryBackoff: false,
          expireInSeconds: Math.max(1, Math.round(env.leaseMs / 1000))
        })
        out.push({ job: j.job, lib_id: libId })
      }
      qc.send({ type: 'enqueued', jobs: out })
    })
  }
  qc.on('stop', async () => {
    await boss.stop({ graceful: true, timeout: 2000, wait: true })
    process.exit(0)
  })
  // ready: said before the worker loop starts, whose first fetch follows
  qc.send({
    type: 'hello',
    library: 'pg-boss',
    version,
    exposes: ['attempt', 'token', 'now_ms', 'lease_until_ms', 'rows']
  })
  if (worker) {
    await boss.work(env.queue, {
      batchSize: 1,
      includeMetadata: true,
      pollingIntervalSeconds: Math.max(0.5, env.pollMs / 1000)
    }, async ([job]) => {
      const started = new Date(job.startedOn).getTime()
      const claim = {
        job: job.data.qc_id,
        lib_id: job.id,
        attempt: job.retryCount + 1,
        token: String(started),
        now_ms: started,
        lease_until_ms: started + Number(job.expireInSeconds) * 1000
      }
      inHand.set(job.id, { job: claim.job, libId: job.id })
      await qc.runJob(claim)
    })
  }
}

main().catch((e) => {
  qc.log('pg-boss adapter failed:', e.stack || e)
  process.exit(1)
})
