// The ORM helpers against the fixture's PostgreSQL (make test-node runs this folder
// under tests/env/testenv.py run --postgres): Drizzle's flakeId column, the Kysely
// plugin, node-postgres' bigint parsers, the shared generator's settings, and
// docs/frameworks.md's `js frameworks` blocks.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { drizzle } = require('drizzle-orm/node-postgres')
const { pgTable, text } = require('drizzle-orm/pg-core')
const { Kysely, PostgresDialect } = require('kysely')
const { Generator, ManualClock, UuidGenerator, decompose, uuid7TimestampMs, uuidVersion } = require('../../loader.js')
const { flakeId, flakeUuid } = require('../../frameworks/drizzle.js')
const { FlakeIdPlugin } = require('../../frameworks/kysely.js')
const { types } = require('../../frameworks/pg.js')
const settings = require('../../frameworks/settings.js')

const PG_URL = process.env.FLAKEID_TEST_POSTGRES_URL
if (!PG_URL) throw new Error('FLAKEID_TEST_POSTGRES_URL is unset: run through make test-node (tests/env/testenv.py run --postgres)')
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

let pool
before(async () => {
  pool = new pg.Pool({ connectionString: PG_URL, max: 2, types })
  await pool.query('DROP TABLE IF EXISTS js_drizzle, js_kysely, js_drizzle_uuid')
  await pool.query('CREATE TABLE js_drizzle (id BIGINT PRIMARY KEY, note TEXT)')
  await pool.query('CREATE TABLE js_drizzle_uuid (id UUID PRIMARY KEY, note TEXT)')
  await pool.query('CREATE TABLE js_kysely (id BIGINT PRIMARY KEY, note TEXT)')
})
after(async () => {
  await pool.query('DROP TABLE IF EXISTS js_drizzle, js_kysely, js_drizzle_uuid')
  await pool.end()
  settings.reset()
})

describe('settings', () => {
  test('no node source takes a free node id on the host; requireNode refuses it', () => {
    settings.reset()
    const g = settings.configure({ layout: 'snowflake' })
    assert.equal(g.node, settings.sharedGenerator().node)
    settings.reset()
    assert.throws(() => settings.configure({ layout: 'snowflake', requireNode: true }), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'node' && /no node id given/.test(e.message))
    settings.reset()
  })

  test('FLAKEID_* variables; bad values name the field and its range', () => {
    assert.deepEqual(settings.settingsFromEnv({ FLAKEID_NODE: 'env:POD', FLAKEID_LAYOUT: 'discord', FLAKEID_OVERFLOW: 'borrow' }),
      { node: 'env:POD', layout: 'discord', overflow: 'borrow' })
    assert.deepEqual(settings.settingsFromEnv({ FLAKEID_DATACENTER: '2', FLAKEID_WORKER: '3' }), { datacenter: 2, worker: 3 })
    assert.deepEqual(settings.settingsFromEnv({ FLAKEID_NODE: '12', FLAKEID_REQUIRE_NODE: 'true', FLAKEID_CLOCK: 'x' }), { node: 12, requireNode: true })
    assert.throws(() => settings.settingsFromEnv({ FLAKEID_WORKER: 'three' }), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'worker')
    // The engine checks ranges: its message names the field and the range.
    assert.throws(() => new Generator(settings.settingsFromEnv({ FLAKEID_WORKER: '32' })),
      (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'worker' && /0\.\.=31/.test(e.message))
  })
})

// The environment's cases of the vectors, as every binding runs them: read, then built with requireNode.
describe('settings vectors', () => {
  const v = JSON.parse(readFileSync(new URL('../../../tests/vectors/options.json', import.meta.url)))
  const camel = Object.fromEntries(v.options.map((o) => [o.name, o.camel_name]))
  for (const c of v.env_cases) {
    test(`env ${JSON.stringify(c.env)}`, () => {
      const build = () => {
        const options = settings.settingsFromEnv(c.env)
        assert.deepEqual(Object.keys(options).sort(), Object.keys(c.options).map((k) => camel[k]).sort())
        new Generator({ ...options, requireNode: true, clock: new ManualClock(1_700_000_000_000) })
      }
      if (c.error) assert.throws(build, (e) => e.code === 'FLAKEID_CONFIG' && e.field === c.field)
      else build()
    })
  }
  // A settings mapping by the engine's names (each key's value 1), as Python's, C's, Go's and Java's take one.
  for (const c of v.settings_cases) {
    test(`settings ${c.keys.join(', ')}`, () => {
      const read = () => settings.settingsOptions(Object.fromEntries(c.keys.map((k) => [k, 1])))
      if (!c.error) return assert.deepEqual(Object.keys(read()), c.names.map((n) => camel[n]))
      assert.throws(read, (e) => e.code === `FLAKEID_${c.error.toUpperCase()}` && e.field === c.field &&
        e.message.startsWith(c.message_starts))
    })
  }
  test('settings: values as given, text read as the environment\'s; the shared generator takes them', () => {
    const mapping = { NODE: 13, LAYOUT: 'discord', 'clock-backwards': 'wait', Max_Wait_Ms: '5', REQUIRE_NODE: 'true', LEASE: null, state: undefined }
    assert.deepEqual(settings.settingsOptions(mapping), { node: 13, layout: 'discord', clockBackwards: 'wait', maxWaitMs: 5, requireNode: true })
    assert.throws(() => settings.settingsOptions({ WORKER: 'three' }), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'worker')
    assert.throws(() => settings.settingsOptions(['NODE']), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'settings' && /got an array/.test(e.message))
    settings.reset()
    assert.equal(decompose(settings.configure(settings.settingsOptions({ NODE: 13 })).nextId()).node, 13)
    settings.reset()
  })
  test('every option but the clock has its variable', () => {
    for (const o of v.options) assert.equal(o.env !== null, o.name !== 'clock', o.name)
  })
})

describe('drizzle', () => {
  const orders = pgTable('js_drizzle', { id: flakeId('id', { generator: new Generator({ node: 5 }) }).primaryKey(), note: text('note') })

  test('an insert without an id gets one; ids come back as bigint', async () => {
    const db = drizzle(pool)
    const rows = await db.insert(orders).values([{ note: 'a' }, { note: 'b' }, { id: 42n, note: 'given' }]).returning()
    assert.equal(rows.length, 3)
    assert.equal(typeof rows[0].id, 'bigint')
    assert.ok(rows[0].id < rows[1].id)
    assert.equal(decompose(rows[0].id).node, 5)
    assert.equal(rows[2].id, 42n)
    const back = await db.select().from(orders)
    assert.deepEqual(back.map((r) => r.id).sort(), rows.map((r) => r.id).sort())
  })

  test('without a generator it takes the shared one, configured once', async () => {
    settings.reset()
    settings.configure({ node: 9 })
    const shared = pgTable('js_drizzle', { id: flakeId().primaryKey(), note: text('note') })
    const [row] = await drizzle(pool).insert(shared).values({ note: 'shared' }).returning()
    assert.equal(decompose(row.id).node, 9)
    assert.equal(settings.configure({ node: 9 }), settings.sharedGenerator()) // the same options: the same one
    assert.throws(() => settings.configure({ node: 10 }), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'settings' && /configured already/.test(e.message))
  })

  test('options are compared by value: equal ones in another order are the same configuration', () => {
    settings.reset()
    const first = settings.configure({ node: 14, layout: 'snowflake', overflow: 'borrow' })
    assert.equal(settings.configure({ overflow: 'borrow', layout: 'snowflake', node: 14 }), first)
    assert.throws(() => settings.configure({ node: 14, layout: 'snowflake', overflow: 'wait' }),
      (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'settings')
    settings.reset()
  })
})

describe('drizzle uuid', () => {
  test('an insert without an id gets a UUIDv7 (text), in PostgreSQL\'s uuid column and through JSON', async () => {
    const T = 1_764_000_000_000
    const given = pgTable('js_drizzle_uuid', {
      id: flakeUuid('id', { generator: new UuidGenerator({ clock: new ManualClock(T) }) }).primaryKey(),
      note: text('note'),
    })
    const db = drizzle(pool)
    const rows = await db.insert(given).values([{ note: 'a' }, { note: 'b' }]).returning()
    assert.equal(typeof rows[0].id, 'string')
    assert.ok(rows[0].id < rows[1].id)
    assert.deepEqual(rows.map((r) => uuid7TimestampMs(r.id)), [T, T])
    // PostgreSQL holds them as uuid and agrees on their order.
    const { rows: pgRows } = await pool.query(
      "SELECT id::text AS id, pg_typeof(id)::text AS type FROM js_drizzle_uuid WHERE note IN ('a', 'b') ORDER BY id")
    assert.deepEqual(pgRows.map((r) => r.id), rows.map((r) => r.id))
    assert.equal(pgRows[0].type, 'uuid')
    assert.deepEqual(JSON.parse(JSON.stringify(rows)), rows)
  })

  test('without a generator it takes the process\'s shared one', async () => {
    const shared = pgTable('js_drizzle_uuid', { id: flakeUuid().primaryKey(), note: text('note') })
    const before = Date.now()
    const [a] = await drizzle(pool).insert(shared).values({ note: 'shared' }).returning()
    const [b] = await drizzle(pool).insert(shared).values({ note: 'shared' }).returning()
    assert.equal(uuidVersion(a.id), 7)
    assert.ok(a.id < b.id)
    // The cached clock may lag by its thread's wake-up latency on a loaded machine (docs/design.md,
    // "The clock"), as api.test.mjs allows.
    assert.ok(uuid7TimestampMs(a.id) >= before - 100 && uuid7TimestampMs(a.id) <= Date.now())
  })
})

describe('kysely', () => {
  test('the plugin fills in missing ids, single and multi-row, and keeps given ones', async () => {
    const db = new Kysely({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: PG_URL, max: 1, types }) }),
      plugins: [new FlakeIdPlugin({ tables: { js_kysely: 'id' }, generator: new Generator({ node: 6 }) })],
    })
    try {
      const one = await db.insertInto('js_kysely').values({ note: 'one' }).returning('id').executeTakeFirstOrThrow()
      assert.equal(typeof one.id, 'bigint')
      assert.equal(decompose(one.id).node, 6)
      const many = await db.insertInto('js_kysely').values([{ note: 'x' }, { id: 7n, note: 'given' }, { note: 'y' }])
        .returning(['id', 'note']).execute()
      assert.equal(many[1].id, 7n)
      assert.ok(many[0].id > one.id && many[2].id > many[0].id)
      const all = await db.selectFrom('js_kysely').select('id').orderBy('id').execute()
      assert.equal(all.length, 4)
    } finally {
      await db.destroy()
    }
  })

  test('a plugin without tables is a config error naming the field', () => {
    assert.throws(() => new FlakeIdPlugin({}), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'tables' && /got undefined$/.test(e.message))
    // The engine's words (flakeid-js), the same on either engine.
    assert.throws(() => new FlakeIdPlugin({ tables: {} }), (e) => e.field === 'tables' &&
      e.message === 'invalid configuration: tables must map at least one table to its ID column, got an empty object')
    assert.throws(() => new FlakeIdPlugin({ tables: ['id'] }), (e) => e.field === 'tables' && /got an array$/.test(e.message))
  })
})

test('pg types: BIGINT and BIGINT[] as bigint', async () => {
  const { rows } = await pool.query("SELECT 9223372036854775807::bigint AS a, '{1,910499571847892992,NULL}'::bigint[] AS b")
  assert.equal(rows[0].a, 9223372036854775807n)
  assert.deepEqual(rows[0].b, [1n, 910499571847892992n, null])
})

// docs/frameworks.md's JS blocks, run as a reader runs them: from a folder inside
// the package (so `@flakeid/node/...` resolves to it and the ORMs to its
// node_modules), with DATABASE_URL and FLAKEID_NODE set.
test('docs/frameworks.md js blocks', () => {
  const dir = mkdtempSync(join(ROOT, 'node', 'test', 'frameworks', '.blocks-'))
  try {
    execFileSync('python3', [join(ROOT, 'tests', 'docs', 'blocks.py'), 'extract', 'js', dir, '--frameworks'])
    const index = readFileSync(join(dir, 'index.tsv'), 'utf8').trim().split('\n').filter(Boolean)
    assert.ok(index.length >= 2, 'docs/frameworks.md has a Drizzle and a Kysely block')
    for (const line of index) {
      const [file, doc, at] = line.split('\t')
      const code = readFileSync(join(dir, file), 'utf8')
      const script = join(dir, file.replace(/\.js$/, /^\s*(import|export)\s/m.test(code) ? '.mjs' : '.cjs'))
      writeFileSync(script, code)
      try {
        execFileSync('node', [script], { cwd: dir, env: { ...process.env, DATABASE_URL: PG_URL, FLAKEID_NODE: '7' }, stdio: 'pipe' })
      } catch (e) {
        assert.fail(`${doc}:${at}: the block failed:\n${e.stdout}${e.stderr}`)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
