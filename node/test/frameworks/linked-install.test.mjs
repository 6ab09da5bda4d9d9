// `npm install ./node` (node/README.md's from-source line) makes a symlink, and Node
// resolves a module's requires from its real path: the adapters' peers (drizzle-orm,
// kysely, pg) must still be the app's. An app outside this repo installs the
// linked package (--ignore-scripts: the addon is already built here, and rebuilding
// it under the other test files would pull it from under them) and its peers (the
// versions of node/package-lock.json, from npm's cache when there), then runs the
// Drizzle, Kysely and pg adapters against the fixture's PostgreSQL: each loads the
// app's copy, never node/node_modules'.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const PG_URL = process.env.FLAKEID_TEST_POSTGRES_URL
if (!PG_URL) throw new Error('FLAKEID_TEST_POSTGRES_URL is unset: run through make test-node (tests/env/testenv.py run --postgres)')
const NODE_DIR = fileURLToPath(new URL('../..', import.meta.url))
const dev = JSON.parse(readFileSync(join(NODE_DIR, 'package.json'), 'utf8')).devDependencies
const app = mkdtempSync(join(tmpdir(), 'flakeid-linked-app-'))
after(() => rmSync(app, { recursive: true, force: true }))

const npm = (...args) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, stdio: 'pipe', timeout: 300_000 })

const APP = `
const pg = require('pg')
const { drizzle } = require('drizzle-orm/node-postgres')
const { pgTable, text } = require('drizzle-orm/pg-core')
const { Kysely, PostgresDialect } = require('kysely')
const { flakeId } = require('@flakeid/node/drizzle')
const { FlakeIdPlugin } = require('@flakeid/node/kysely')
const { types } = require('@flakeid/node/pg')
const { stringify } = require('@flakeid/node/json')

async function main() {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, types })
  await pool.query('DROP TABLE IF EXISTS js_linked; CREATE TABLE js_linked (id bigint PRIMARY KEY, note text)')
  const t = pgTable('js_linked', { id: flakeId('id').primaryKey(), note: text('note') })
  const [row] = await drizzle(pool).insert(t).values({ note: 'drizzle' }).returning()
  const db = new Kysely({ dialect: new PostgresDialect({ pool }), plugins: [new FlakeIdPlugin({ tables: { js_linked: 'id' } })] })
  const [k] = await db.insertInto('js_linked').values({ note: 'kysely' }).returning('id').execute()
  await pool.query('DROP TABLE js_linked')
  await pool.end()
  const loaded = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](drizzle-orm|kysely|pg)[\\\\/]/.test(f))
  process.stdout.write(stringify({ drizzle: row.id, kysely: k.id, loaded }))
}
main().catch((err) => { console.error(err); process.exit(1) })
`

test('npm install ./node: the adapters use the app\'s drizzle-orm, kysely and pg', () => {
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'linked-app', version: '1.0.0', private: true }))
  npm('install', '--ignore-scripts', NODE_DIR)
  npm('install', `drizzle-orm@${dev['drizzle-orm']}`, `kysely@${dev.kysely}`, `pg@${dev.pg}`)
  writeFileSync(join(app, 'app.js'), APP)
  const out = JSON.parse(execFileSync('node', ['app.js'], { cwd: app, env: { ...process.env, DATABASE_URL: PG_URL, FLAKEID_NODE: '12' } }).toString())
  assert.match(out.drizzle, /^[1-9][0-9]+$/)
  assert.match(out.kysely, /^[1-9][0-9]+$/)
  const outside = out.loaded.filter((f) => !f.startsWith(app))
  assert.deepEqual(outside, [], 'peers loaded from outside the app (a second copy)')
})
