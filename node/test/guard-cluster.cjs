// guard.test.mjs's cluster: 4 workers, each builds a generator from the options in
// argv[2] and issues 2,000 IDs (as strings); the primary prints what each did as JSON.
const cluster = require('node:cluster')
const options = JSON.parse(process.argv[2])
if (cluster.isPrimary) {
  const results = []
  for (let i = 0; i < 4; i++) {
    cluster.fork().on('message', (m) => {
      results.push(m)
      if (results.length === 4) {
        process.stdout.write(JSON.stringify(results))
        // Every worker holds its generator until all have reported.
        for (const w of Object.values(cluster.workers)) w.send('done')
      }
    })
  }
} else {
  const { Generator } = require(process.env.FLAKEID_FROM === 'package' ? '@flakeid/node' : '../index.js')
  let gen
  try {
    gen = new Generator(options)
    const ids = []
    for (let i = 0; i < 2000; i++) ids.push(String(gen.nextId()))
    process.send({ pid: process.pid, ids })
  } catch (e) {
    process.send({ pid: process.pid, error: e.message })
  }
  process.on('message', () => process.exit(0))
}
