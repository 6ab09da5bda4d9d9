// uuid.test.mjs's cluster: 4 workers, each with a UuidGenerator of its own on a
// ManualClock at the same millisecond (so their time and counter bits agree and
// only the random bits can keep them apart) and the process's shared uuid7(); each
// sends its IDs as text, the primary prints them all as JSON.
const cluster = require('node:cluster')
const WORKERS = 4
if (cluster.isPrimary) {
  const results = []
  for (let i = 0; i < WORKERS; i++) {
    cluster.fork().on('message', (m) => {
      results.push(m)
      if (results.length === WORKERS) {
        process.stdout.write(JSON.stringify(results))
        for (const w of Object.values(cluster.workers)) w.send('done')
      }
    })
  }
} else {
  const path = process.env.FLAKEID_BACKEND === 'wasm' ? '../../bindings/wasm/pkg/node/index.js' : '../index.js'
  const api = require(process.env.FLAKEID_FROM === 'package' ? '@flakeid/node' : path)
  const g = new api.UuidGenerator({ clock: new api.ManualClock(1_764_000_000_000) })
  const manual = Array.from({ length: 5000 }, () => g.uuid7())
  const shared = Array.from({ length: 5000 }, () => api.uuid7())
  process.send({ pid: process.pid, manual, shared })
  process.on('message', () => process.exit(0))
}
