// `lease: 'database'` through @flakeid/node/settings, against the fixture's PostgreSQL
// (make test-node runs this folder under tests/env/testenv.py run --postgres): the node
// id leased from the app's own pg Pool (Drizzle's and Kysely's), a second instance
// holding another, another database refused.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { after, test } from 'node:test'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { drizzle } = require('drizzle-orm/node-postgres')
const { pgTable, text } = require('drizzle-orm/pg-core')
const { Kysely, PostgresDialect } = require('kysely')
const { decompose } = require('../../loader.js')
const { flakeId } = require('../../frameworks/drizzle.js')
const { FlakeIdPlugin } = require('../../frameworks/kysely.js')
const { types } = require('../../frameworks/pg.js')
const settings = require('../../frameworks/settings.js')

const PG_URL = process.env.FLAKEID_TEST_POSTGRES_URL
if (!PG_URL) throw new Error('FLAKEID_TEST_POSTGRES_URL is unset: run through make test-node (tests/env/testenv.py run --postgres)')

after(() => settings.reset())

/** The fixture's URL as a pg config of separate fields (as an app writes its Pool's). */
function fields() {
  const u = new URL(PG_URL)
  return { host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1) }
}

// A namespace's first use waits out the lock delay (TTL + margin + borrow,
// docs/leases.md): the shortest TTL keeps that wait short.
const TTL_MS = 1000

/** A second app instance: its node id while it holds it, until its stdin closes. */
async function instance() {
  const script = `
    const pg = require('pg')
    const settings = require('./frameworks/settings.js')
    const g = settings.configure({ lease: 'database', leaseTtlMs: ${TTL_MS} }, { database: new pg.Pool({ connectionString: process.env.FLAKEID_TEST_POSTGRES_URL }) })
    console.log(JSON.stringify([g.node, g.nodeOrigin, String(g.nextId())]))
    process.stdin.once('data', () => { settings.reset(); process.exit(0) })`
  const child = spawn(process.execPath, ['-e', script], { cwd: new URL('../..', import.meta.url), stdio: ['pipe', 'pipe', 'inherit'] })
  const [line] = await once(child.stdout.setEncoding('utf8'), 'data')
  return { seen: JSON.parse(line), done: async () => { child.stdin.end('\n'); const [code] = await once(child, 'exit'); return code } }
}

test('drizzle: lease database is the pool\'s PostgreSQL; a second instance holds another node id', async () => {
  const pool = new pg.Pool({ ...fields(), max: 1, types })
  const db = drizzle(pool)
  settings.reset()
  const g = settings.configure({ lease: 'database', leaseTtlMs: TTL_MS }, { database: db })
  const other = await instance()
  try {
    assert.equal(g.nodeOrigin, 'leased')
    assert.equal(g.stats().nodeOrigin, 'leased')
    await pool.query('DROP TABLE IF EXISTS js_lease_db; CREATE TABLE js_lease_db (id BIGINT PRIMARY KEY, note TEXT)')
    const rows = await db.insert(pgTable('js_lease_db', { id: flakeId().primaryKey(), note: text('note') })).values([{ note: 'a' }, { note: 'b' }]).returning()
    assert.deepEqual(rows.map((r) => decompose(r.id).node), [g.node, g.node])
    const [node, origin, first] = other.seen
    assert.equal(origin, 'leased')
    assert.notEqual(node, g.node)
    assert.equal(decompose(BigInt(first)).node, node)
  } finally {
    assert.equal(await other.done(), 0)
    await pool.query('DROP TABLE IF EXISTS js_lease_db')
    await pool.end()
    settings.reset()
  }
})

test('kysely: the plugin takes the shared generator leased from the pool', async () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1, types })
  settings.reset()
  const g = settings.configure({ lease: 'database', leaseTtlMs: TTL_MS }, { database: pool })
  const db = new Kysely({ dialect: new PostgresDialect({ pool }), plugins: [new FlakeIdPlugin({ tables: { js_lease_db: 'id' } })] })
  try {
    assert.equal(g.nodeOrigin, 'leased')
    await pool.query('DROP TABLE IF EXISTS js_lease_db; CREATE TABLE js_lease_db (id BIGINT PRIMARY KEY, note TEXT)')
    const row = await db.insertInto('js_lease_db').values({ note: 'k' }).returning('id').executeTakeFirstOrThrow()
    assert.equal(decompose(row.id).node, g.node)
    await pool.query('DROP TABLE js_lease_db')
  } finally {
    await db.destroy()
    settings.reset()
  }
})

test('another database, or none, is a config error on lease that shows no password', () => {
  settings.reset()
  for (const database of ['mysql://app:hunter2@db/shop', { connectionString: 'sqlite:///tmp/x.db' }]) {
    assert.throws(() => settings.configure({ lease: 'database' }, { database }),
      (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'lease' && /only PostgreSQL/.test(e.message) && !e.message.includes('hunter2'))
  }
  assert.throws(() => settings.configure({ lease: 'database' }, { database: { password: 'hunter2', database: 'shop' } }),
    (e) => e.field === 'lease' && /TCP host/.test(e.message) && !e.message.includes('hunter2'))
  // Without the pool the word reaches the engine, which says what it means.
  assert.throws(() => settings.configure({ lease: 'database' }), (e) => e.field === 'lease' && /framework adapter/.test(e.message))
  settings.reset()
})
