// IDs through a real HTTP server to a plain JSON.parse client: Drizzle rows read from
// the fixture's PostgreSQL (bigints) written with `replacer`, the one setting
// docs/frameworks.md gives Express (`app.set('json replacer', replacer)`: res.json is
// JSON.stringify(body, replacer)) and Fastify (`setReplySerializer`), come back
// exactly; without it res.json throws (a 500), and numbers come back rounded.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { drizzle } = require('drizzle-orm/node-postgres')
const { pgTable, text } = require('drizzle-orm/pg-core')
const { Generator } = require('../../loader.js')
const { flakeId } = require('../../frameworks/drizzle.js')
const { replacer, stringify } = require('../../frameworks/json.js')

const PG_URL = process.env.FLAKEID_TEST_POSTGRES_URL
if (!PG_URL) throw new Error('FLAKEID_TEST_POSTGRES_URL is unset: run through make test-node (tests/env/testenv.py run --postgres)')
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

const gen = new Generator({ node: 11 })
const orders = pgTable('js_wire', { id: flakeId('id', { generator: gen }).primaryKey(), parent: flakeId('parent', { generator: gen }), note: text('note') })
let pool, db, server, port
const want = []

// The ways a server writes JSON: Express's res.json is JSON.stringify(body, app.get('json replacer')).
const writers = {
  replacer: (body) => JSON.stringify(body, replacer), // app.set('json replacer', replacer)
  fastify: (body) => stringify(body), // fastify.setReplySerializer((payload) => stringify(payload))
  none: (body) => JSON.stringify(body), // no setting: res.json throws on a bigint
  numbers: (body) => JSON.stringify(body, (k, v) => (typeof v === 'bigint' ? Number(v) : v)),
}

before(async () => {
  pool = new pg.Pool({ connectionString: PG_URL, max: 2 })
  await pool.query('DROP TABLE IF EXISTS js_wire')
  await pool.query('CREATE TABLE js_wire (id BIGINT PRIMARY KEY, parent BIGINT, note TEXT)')
  db = drizzle(pool)
  const rows = await db.insert(orders).values(Array.from({ length: 200 }, (_, i) => ({ note: `n${i}` }))).returning()
  for (const r of rows) want.push(r.id.toString(), r.parent.toString())
  port = Number(execFileSync('python3', [join(ROOT, 'tests', 'env', 'testenv.py'), 'port']).toString().trim())
  server = createServer(async (req, res) => {
    try {
      const list = await db.select().from(orders).orderBy(orders.id)
      const body = writers[req.url.slice(1)](list)
      res.writeHead(200, { 'content-type': 'application/json' }).end(body)
    } catch (err) {
      res.writeHead(500).end(String(err))
    }
  })
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
})
after(async () => {
  await new Promise((resolve) => server.close(resolve))
  await pool.query('DROP TABLE IF EXISTS js_wire')
  await pool.end()
  gen.close()
})

async function read(path) {
  const r = await fetch(`http://127.0.0.1:${port}/${path}`)
  const text = await r.text()
  if (r.status !== 200) return { status: r.status, text }
  const rows = JSON.parse(text) // a plain client: no reviver
  const got = rows.flatMap((r) => [String(r.id), String(r.parent)])
  return { status: 200, wrong: got.filter((g, i) => g !== want[i]).length + Math.abs(got.length - want.length) }
}

test('with the replacer (Express) and stringify (Fastify) every ID is read exactly', async () => {
  assert.ok(want.every((id) => BigInt(id) > 2n ** 53n))
  assert.deepEqual(await read('replacer'), { status: 200, wrong: 0 })
  assert.deepEqual(await read('fastify'), { status: 200, wrong: 0 })
})

test('without it: a 500, or numbers that JSON.parse rounds', async (t) => {
  const none = await read('none')
  assert.equal(none.status, 500)
  assert.match(none.text, /BigInt/)
  const numbers = await read('numbers')
  t.diagnostic(`IDs as numbers: JSON.parse read ${numbers.wrong} of ${want.length} wrong`)
  assert.ok(numbers.wrong > want.length / 2, `${numbers.wrong} of ${want.length} read wrong`)
})
