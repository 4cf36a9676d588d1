// qchaos.js - the adapter side of qchaos's adapter protocol (docs/adapters.md)
// for Node: JSON lines on stdin/stdout, logs on stderr.  The library
// adapters (pgboss.js, graphile_worker.js) and the template use it.
//
//   const qc = require('./qchaos')
//   qc.send({ type: 'hello', library, version, exposes })
//   const answer = await qc.ask({ type: 'claimed', job, ... }, 'run')   // waits for qchaos's word
//   qc.on('enqueue', async (msg) => ...)                               // messages qchaos starts
//
// Answers are matched by (job, type); qchaos never sends two answers of one
// type for one job at once.  When stdin closes (qchaos is gone) the process
// exits: an adapter never outlives its harness.
'use strict'

const readline = require('node:readline')

const env = {
  dsn: process.env.QCHAOS_DSN || '',
  role: process.env.QCHAOS_ROLE || 'worker',
  workerId: Number(process.env.QCHAOS_WORKER_ID || 0),
  incarnation: Number(process.env.QCHAOS_INCARNATION || 0),
  appName: process.env.QCHAOS_APP_NAME || 'qchaos-adapter',
  leaseMs: Number(process.env.QCHAOS_LEASE_MS || 5000),
  maxAttempts: Number(process.env.QCHAOS_MAX_ATTEMPTS || 3),
  retryDelayMs: Number(process.env.QCHAOS_RETRY_DELAY_MS || 0),
  pollMs: Number(process.env.QCHAOS_POLL_MS || 500),
  queue: process.env.QCHAOS_QUEUE || 'qchaos'
}

const waiting = new Map() // "type:job" -> resolve
const handlers = new Map() // type -> async (msg) => void

function send (msg) {
  // pipes are synchronous on Linux: the line is out before this returns
  process.stdout.write(JSON.stringify(msg) + '\n')
}

function log (...args) {
  process.stderr.write(`[${env.appName}] ${args.join(' ')}\n`)
}

// Sends msg and resolves with qchaos's answer of type `answer` for msg.job.
function ask (msg, answer) {
  return new Promise((resolve) => {
    waiting.set(`${answer}:${msg.job}`, resolve)
    send(msg)
  })
}

function on (type, fn) {
  handlers.set(type, fn)
}

const rl = readline.createInterface({ input: process.stdin })
rl.on('line', (line) => {
  let msg
  try {
    msg = JSON.parse(line)
  } catch (e) {
    log('qchaos sent a line that is not JSON:', line)
    process.exit(70)
  }
  // effect_ok and effect_failed both answer an effect
  const t = msg.type === 'effect_ok' || msg.type === 'effect_failed' ? 'effect_answer' : msg.type
  const key = `${t}:${msg.job}`
  const w = waiting.get(key)
  if (w) {
    waiting.delete(key)
    w(msg)
    return
  }
  const h = handlers.get(msg.type)
  if (h) {
    Promise.resolve(h(msg)).catch((e) => {
      log(`handling ${msg.type} failed:`, e.stack || e)
      process.exit(70)
    })
    return
  }
  log('no handler for', line)
})
rl.on('close', () => process.exit(0))

// The job's life as qchaos directs it, inside the library's handler:
// claimed -> run (work_ms) -> effect -> effect_ok | effect_failed (throw).
// `claim` holds what the library told the handler (job, lib_id, attempt,
// token, lease_until_ms, now_ms).  Resolves when the handler may return;
// throws what the handler must throw.
async function runJob (claim) {
  const run = await ask({ type: 'claimed', ...claim }, 'run')
  if (run.work_ms > 0) await new Promise((resolve) => setTimeout(resolve, run.work_ms))
  const eff = await ask({ type: 'effect', job: claim.job, op_key: run.op_key }, 'effect_answer')
  if (eff.type === 'effect_failed') throw new Error(eff.error || 'the effect failed')
  if (run.then === 'throw') throw new Error(run.error || 'qchaos said throw')
}

// The outcome of a library request that failed: "info" (the answer is
// unknown: the connection was lost, the server shut down) or "fail" (the
// server refused the statement: it did not happen).
function outcomeOf (err) {
  const code = err && err.code
  if (typeof code === 'string' && code.length === 5 && !code.startsWith('08') && !code.startsWith('57')) return 'fail'
  return 'info'
}

module.exports = { env, send, ask, on, log, runJob, outcomeOf }
