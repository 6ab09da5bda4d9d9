// One owner per node id from JS: generators of one process on one node id share
// its counter (a second one, a rebuild per request, an unclosed one: no error, no
// repeat); a fixed node id held by another process (a `cluster` worker) is refused
// at its build; with no node id each process takes a free one on the host (cluster
// workers, `node --test`'s parallel files); with a `file://` lease every worker
// takes a node id of its own. Native addon only: the wasm build has no files, and
// so no guard and no leases.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BACKEND, Generator, decompose, pkgDir } from './backend.mjs'

const dir = mkdtempSync(join(tmpdir(), 'flakeid-guard-'))
process.env.FLAKEID_HOST_GUARD = join(dir, 'guard') // backend.mjs turned it off for the rest of the suite

describe('host guard', { skip: BACKEND === 'wasm' && 'the wasm build has no files: no guard' }, () => {
  test('generators on one node id share its counter; close() ends only its own', () => {
    const a = new Generator({ node: 5 })
    const b = new Generator({ node: 5, overflow: 'borrow' })
    const ids = []
    for (let i = 0; i < 2000; i++) ids.push(i % 2 ? a.nextId() : b.nextId())
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'one counter, in call order')
    a.close()
    a.close() // idempotent
    assert.throws(() => a.nextId(), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'generator')
    assert.ok(b.nextId() > ids.at(-1))
    b.close()
  })

  test('a generator per request, closed or left to the collector, never repeats', () => {
    let last = 0n
    for (let i = 0; i < 5000; i++) {
      const g = new Generator({ worker: 1 })
      const id = g.nextId()
      assert.ok(id > last, `${id} after ${last}`)
      last = id
      if (i % 2) g.close()
    }
  })

  test('cluster: a fixed node id serves one worker, the others refused at build; no node id or a file lease gives each its own', () => {
    const script = fileURLToPath(new URL('./guard-cluster.cjs', import.meta.url))
    const run = (options) => {
      const r = spawnSync(process.execPath, [script, JSON.stringify(options)], {
        cwd: pkgDir, encoding: 'utf8', timeout: 60_000, env: { ...process.env },
      })
      assert.equal(r.status, 0, r.stderr)
      return JSON.parse(r.stdout)
    }
    const fixed = run({ node: 6 })
    const issued = fixed.filter((w) => w.ids)
    assert.equal(issued.length, 1, JSON.stringify(fixed))
    for (const w of fixed.filter((w) => !w.ids)) assert.match(w.error, /node id 6 of this layout is already in use on this host by process \d+/)
    const unset = run({})
    assert.equal(unset.filter((w) => w.ids).length, 4, JSON.stringify(unset))
    const picked = new Generator()
    assert.deepEqual([picked.nodeOrigin, picked.stats().nodeOrigin], ['host', 'host'])
    picked.close()
    const all = unset.flatMap((w) => w.ids)
    assert.equal(new Set(all).size, all.length, 'IDs issued twice')
    assert.equal(new Set(unset.map((w) => decompose(BigInt(w.ids[0])).node)).size, 4, 'two workers on one node id')
    const leased = run({ lease: pathToFileURL(join(dir, 'leases')).href })
    assert.equal(leased.filter((w) => w.ids).length, 4, JSON.stringify(leased))
    const ids = leased.flatMap((w) => w.ids.map(BigInt))
    assert.equal(new Set(ids).size, ids.length, 'IDs issued twice')
    const nodes = leased.map((w) => new Set(w.ids.map((i) => decompose(BigInt(i)).node)))
    assert.ok(nodes.every((n) => n.size === 1))
    assert.equal(new Set(nodes.map((n) => [...n][0])).size, 4, 'two workers on one node id')
  })

  test('node --test: parallel files with no node id all pass, no ID twice', () => {
    const out = join(dir, 'parallel-out')
    mkdirSync(out)
    const files = join(fileURLToPath(new URL('./fixtures/parallel', import.meta.url)))
    // A test runner of its own, as a user runs it (not a child reporting to ours).
    const env = { ...process.env, FLAKEID_TEST_OUT: out }
    delete env.NODE_TEST_CONTEXT
    const r = spawnSync(process.execPath, ['--test', '--test-concurrency=4', ...readdirSync(files).map((f) => join(files, f))], {
      cwd: pkgDir, encoding: 'utf8', timeout: 120_000, env,
    })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /# pass 12/)
    const ids = readdirSync(out).flatMap((f) => readFileSync(join(out, f), 'utf8').trim().split('\n'))
    assert.equal(ids.length, 12 * 5000)
    assert.equal(new Set(ids).size, ids.length, 'IDs issued twice')
  })
})
