// broken.js MODE - an adapter that breaks the adapter protocol on purpose
// (tests/adapters.sh).  As the enqueuer it behaves (hello, enqueued) unless
// MODE starts with "enq-"; as a worker it misbehaves as MODE says:
//   exit       exits with status 3 before its hello
//   silent     never writes a line (start_timeout_ms)
//   malformed  hello, then a line that is not JSON
//   unknown    hello, then a message of an unknown type
//   nojob      hello, then "claimed" without a job
//   failfirst N  behaves, as the one worker of a queue of jobs 1..N held in
//              memory, except that it fails each job's first attempt
//              (the library's handler timeout) and completes its second
//   enq-noanswer   the enqueuer says hello and never answers enqueue
//   enq-malformed  the enqueuer answers enqueue with a line that is not JSON
'use strict'
const readline = require('node:readline')
const mode = process.argv[2] || ''
const enqueuer = process.env.QCHAOS_ROLE !== 'worker'
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n')
const hello = () => send({ type: 'hello', library: 'broken', version: '0' })

const rl = readline.createInterface({ input: process.stdin })
rl.on('close', () => process.exit(0))
if (enqueuer) {
  hello()
  rl.on('line', (line) => {
    const m = JSON.parse(line)
    if (m.type === 'stop') process.exit(0)
    if (m.type !== 'enqueue') return
    if (mode === 'enq-noanswer') return
    if (mode === 'enq-malformed') return process.stdout.write('enqueued, all of them\n')
    send({ type: 'enqueued', jobs: m.jobs.map((j) => ({ job: j.job, lib_id: String(j.job) })) })
  })
} else if (mode === 'exit') {
  process.exit(3)
} else if (mode === 'silent') {
  setInterval(() => {}, 1000)
} else if (mode === 'failfirst') {
  const n = Number(process.argv[3] || 3)
  let job = 1
  let attempt = 1
  const claim = () => {
    if (job > n) return send({ type: 'polled', rows: 0 })
    send({ type: 'claimed', job, attempt, token: `${job}.${attempt}` })
  }
  hello()
  rl.on('line', (line) => {
    const m = JSON.parse(line)
    if (m.type === 'stop') process.exit(0)
    if (m.type === 'run') return send({ type: 'effect', job: m.job, op_key: m.op_key })
    if (m.type === 'effect_ok' || m.type === 'effect_failed') {
      return send({ type: attempt === 1 ? 'failing' : 'completing', job: m.job })
    }
    if (m.type === 'go') {
      send({ type: attempt === 1 ? 'failed' : 'completed', job: m.job })
      if (attempt === 1) attempt = 2
      else {
        job++
        attempt = 1
      }
      setTimeout(claim, 10)
    }
  })
  claim()
} else {
  hello()
  if (mode === 'malformed') process.stdout.write('{"type": "claimed", "job": 1\n')
  if (mode === 'unknown') send({ type: 'took', job: 1 })
  if (mode === 'nojob') send({ type: 'claimed', attempt: 1 })
  setInterval(() => {}, 1000)
}
