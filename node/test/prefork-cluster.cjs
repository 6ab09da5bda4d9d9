// prefork.test.mjs's server: a `cluster` primary and 4 workers, each serving
// GET /ids?n= on the port in argv[3]: the IDs an INSERT through the adapter in argv[2]
// (drizzle: flakeId's column default; kysely: FlakeIdPlugin) is given, as strings, with
// the worker's pid. The adapter takes the process's generator from the FLAKEID_*
// variables. The primary prints `listening` once all 4 listen; a worker that exits
// before it listens stops the server with its exit code (a primary that restarted
// such a worker would restart it forever).
'use strict'
const cluster = require('node:cluster')
const http = require('node:http')

const [adapter, port] = process.argv.slice(2)
if (cluster.isPrimary) {
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.kill()
  })
  let listening = 0
  for (let i = 0; i < 4; i++) {
    const worker = cluster.fork()
    worker.on('listening', () => {
      worker.listened = true
      if (++listening === 4) process.stdout.write('listening\n')
    })
    worker.on('exit', (code) => {
      if (worker.listened) return
      process.stderr.write(`worker ${worker.process.pid} exited with code ${code} before it listened: stopping\n`)
      for (const w of Object.values(cluster.workers)) w.kill()
      process.exitCode = code || 1
    })
  }
} else {
  const insert = adapter.startsWith('drizzle') ? drizzle() : kysely()
  // `-late`: the worker configures after an await in its start (as one that first
  // opens its database pool does), with options of its own.
  const settings = require('../frameworks/settings.js')
  const started = adapter.endsWith('-late')
    ? new Promise((resolve) => setTimeout(resolve, 20)).then(() => settings.configure({ maxWaitMs: 500 }))
    : Promise.resolve()
  started.then(() => listen(insert, settings))
}

/** Serves GET /ids?n= from `insert`, with the worker's pid and its generator's maxWaitMs. */
function listen(insert, settings) {
  http
    .createServer((req, res) => {
      const n = Number(new URL(req.url, 'http://x').searchParams.get('n') || '1')
      try {
        const ids = Array.from({ length: n }, () => String(insert()))
        const { maxWaitMs } = settings.sharedGenerator()
        res.end(JSON.stringify({ pid: process.pid, ids, maxWaitMs }))
      } catch (e) {
        res.statusCode = 500
        res.end(e.message)
      }
    })
    .listen(Number(port), '127.0.0.1')
}

/** An INSERT of one row through Drizzle (a mock database: the statement, not sent); its ID. */
function drizzle() {
  const { drizzle } = require('drizzle-orm/node-postgres')
  const { pgTable, integer } = require('drizzle-orm/pg-core')
  const { flakeId } = require('../frameworks/drizzle.js')
  const orders = pgTable('orders', { id: flakeId('id').primaryKey(), total: integer('total') })
  const db = drizzle.mock()
  return () => db.insert(orders).values({ total: 1 }).toSQL().params[0]
}

/** An INSERT of one row through Kysely with the plugin (compiled, not sent); its ID. */
function kysely() {
  const { Kysely, DummyDriver, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } = require('kysely')
  const { FlakeIdPlugin } = require('../frameworks/kysely.js')
  const db = new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new FlakeIdPlugin({ tables: { orders: 'id' } })],
  })
  return () => db.insertInto('orders').values({ total: 1 }).compile().parameters.at(-1)
}
