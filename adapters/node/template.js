// template.js - a qchaos adapter for a Node queue library, to copy
// (docs/adapters.md; README "Testing a queue library (adapters)").
// Replace the four marked places with your library's calls.  Run it with
//   [adapter] command = node adapters/node/my_library.js
'use strict'
const qc = require('./qchaos') // the line protocol: send, ask, on, runJob
const { env } = qc

// 1. Your library, connected with env.appName as application_name (qchaos
//    finds and cuts its sessions by it) and the PG* variables qchaos sets.
const lib = require('my-queue-library') // <- your library
const queue = lib.connect({ applicationName: env.appName })

// 2. Watch the library's requests: wrap its fetch, complete and fail (the
//    functions its worker loop calls), tell qchaos, return what they return.
const origComplete = queue.complete.bind(queue)
queue.complete = async (job, ...rest) => {
  await qc.ask({ type: 'completing', job: job.data.qc_id }, 'go') // lost ack happens here
  try {
    const rows = await origComplete(job, ...rest)
    qc.send({ type: 'completed', job: job.data.qc_id, rows })
    return rows
  } catch (err) {
    qc.send({ type: 'completed', job: job.data.qc_id, outcome: qc.outcomeOf(err), error: err.message })
    throw err
  }
}

async function main () {
  await queue.start()
  if (env.role === 'enqueuer') {
    // 3. Enqueue through the library; keep qchaos's id in the payload.
    qc.on('enqueue', async ({ jobs }) => {
      const out = []
      for (const j of jobs) {
        const id = await queue.add({ qc_id: j.job, payload: j.payload }, { attempts: env.maxAttempts })
        out.push({ job: j.job, lib_id: String(id) })
      }
      qc.send({ type: 'enqueued', jobs: out })
    })
  }
  qc.on('stop', async () => { await queue.stop(); process.exit(0) })
  // say what the library tells a handler about its claim
  qc.send({ type: 'hello', library: 'my-queue-library', version: lib.version, exposes: ['attempt'] })
  if (env.role === 'worker') {
    // 4. The library's own worker loop; the handler lets qchaos direct the job.
    queue.process(async (job) => {
      await qc.runJob({ job: job.data.qc_id, lib_id: String(job.id), attempt: job.attempt })
    })
  }
}
main().catch((e) => { qc.log(e.stack || e); process.exit(1) })
