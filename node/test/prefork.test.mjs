// A `cluster` of 4 workers serving IDs through the Drizzle and Kysely adapters
// (prefork-cluster.cjs), started as a user starts it. With one fixed node id
// (FLAKEID_NODE=5) the server never serves: a worker refused by the host guard
// exits at start with the engine's refusal naming node 5, and the primary stops
// (within 30 s, 0 requests answered 500). With no node id each worker takes its
// own, and the IDs of every worker are distinct. A process that is not a cluster
// worker (a script, drizzle-kit) sets the adapters up on a held node id untouched.
// Native addon only: the wasm build has no files, and so no guard.
import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { BACKEND, FROM_PACKAGE, Generator, decompose, pkgDir } from './backend.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SCRIPT = fileURLToPath(new URL('./prefork-cluster.cjs', import.meta.url))

/** The cluster serving on a port of the fixture's: the process, its output so far, and its end. */
function serve(adapter, env) {
  const port = Number(execFileSync('python3', [join(ROOT, 'tests', 'env', 'testenv.py'), 'port']).toString().trim())
  const guard = join(mkdtempSync(join(tmpdir(), 'flakeid-prefork-')), 'guard')
  const child = spawn(process.execPath, [SCRIPT, adapter, String(port)], {
    cwd: pkgDir,
    env: { ...process.env, FLAKEID_HOST_GUARD: guard, ...env },
  })
  const out = { text: '' }
  child.stdout.on('data', (d) => (out.text += d))
  child.stderr.on('data', (d) => (out.text += d))
  const ended = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, port, out, ended }
}

/** The HTTP status of GET /ids?n=`n` with its body, or null when nothing answered. */
async function get(port, n = 1) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/ids?n=${n}`)
    return { status: r.status, body: await r.text() }
  } catch {
    return null
  }
}

// Not against the installed package (test-dist): the adapters' peers (drizzle-orm,
// kysely) and the fixture (tests/env) are the checkout's; test-node runs it there.
const skip = (BACKEND === 'wasm' && 'the wasm build has no files: no guard') ||
  (FROM_PACKAGE && "the adapters' suite: run from the checkout by test-node")
describe('cluster: a fixed node id fails at start', { skip }, () => {
  for (const adapter of ['drizzle', 'kysely']) {
    test(`${adapter}: FLAKEID_NODE=5 under 4 workers stops the server, 0 requests answered 500`, async () => {
      const { child, port, out, ended } = serve(adapter, { FLAKEID_NODE: '5' })
      const statuses = []
      let code
      const deadline = Date.now() + 30_000
      while (code === undefined && Date.now() < deadline) {
        const r = await get(port)
        if (r) statuses.push(r.status)
        code = await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 50))])
      }
      if (code === undefined) child.kill('SIGKILL')
      assert.notEqual(code, undefined, `still running after 30 s:\n${out.text}`)
      assert.notEqual(code, 0, out.text)
      assert.match(out.text, /node id 5 of this layout is already in use on this host by process \d+/)
      assert.ok(!out.text.includes('listening\n'), out.text)
      assert.deepEqual(statuses.filter((s) => s === 500), [], out.text)
    })
  }

  // The adapters share buildAtStart: one of them is enough here. `kysely-late`: each
  // worker calls configure() with options of its own after an await: it replaces the
  // generator built at start (no ID made yet) instead of being refused as configured twice.
  for (const [adapter, maxWaitMs] of [['kysely', 1000], ['kysely-late', 500]]) test(`${adapter}: with no node id every worker serves IDs of its own node id, none twice`, async () => {
    const { child, port, out, ended } = serve(adapter, {})
    try {
      const deadline = Date.now() + 30_000
      while (!out.text.includes('listening\n') && Date.now() < deadline) {
        assert.equal(child.exitCode, null, out.text)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.ok(out.text.includes('listening\n'), out.text)
      const bodies = await Promise.all(Array.from({ length: 40 }, () => get(port, 100)))
      assert.ok(bodies.every((r) => r && r.status === 200), JSON.stringify(bodies.find((r) => !r || r.status !== 200)))
      const replies = bodies.map((r) => JSON.parse(r.body))
      assert.deepEqual([...new Set(replies.map((r) => r.maxWaitMs))], [maxWaitMs])
      const ids = replies.flatMap((r) => r.ids)
      assert.equal(new Set(ids).size, 4000, `${4000 - new Set(ids).size} IDs issued twice`)
      const nodes = new Map()
      for (const r of replies) for (const id of r.ids) nodes.set(r.pid, (nodes.get(r.pid) || new Set()).add(decompose(BigInt(id)).node))
      assert.ok([...nodes.values()].every((n) => n.size === 1), 'a worker on two node ids')
      const owners = [...nodes.values()].map((n) => [...n][0])
      assert.equal(new Set(owners).size, owners.length, 'two workers on one node id')
    } finally {
      child.kill('SIGTERM')
      await ended
    }
  })

  test('outside a cluster worker the adapters build nothing as they are set up', () => {
    const guard = join(mkdtempSync(join(tmpdir(), 'flakeid-prefork-')), 'guard')
    const before = process.env.FLAKEID_HOST_GUARD
    process.env.FLAKEID_HOST_GUARD = guard // backend.mjs turned it off for the suite
    const held = new Generator({ node: 5 })
    try {
      const script = `
        const { flakeId } = require('./frameworks/drizzle.js')
        const { FlakeIdPlugin } = require('./frameworks/kysely.js')
        flakeId('id')
        new FlakeIdPlugin({ tables: { orders: 'id' } })
        setTimeout(() => process.stdout.write('set up'), 20)`
      const r = spawnSync(process.execPath, ['-e', script], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, FLAKEID_HOST_GUARD: guard, FLAKEID_NODE: '5' },
      })
      assert.deepEqual([r.status, r.stdout], [0, 'set up'], r.stderr)
    } finally {
      held.close()
      process.env.FLAKEID_HOST_GUARD = before
    }
  })
})

