// The host guard from JS: one fixed node id serves one live generator on a host,
// in this process (until close()) or another one (a `cluster` worker); with a
// `file://` lease every worker takes a node id of its own. Native addon only: the
// wasm build has no files, and so no guard and no leases.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BACKEND, Generator, decompose, pkgDir } from './backend.mjs'

const dir = mkdtempSync(join(tmpdir(), 'flakeid-guard-'))
process.env.FLAKEID_HOST_GUARD = join(dir, 'guard') // backend.mjs turned it off for the rest of the suite

describe('host guard', { skip: BACKEND === 'wasm' && 'the wasm build has no files: no guard' }, () => {
  test('a second live generator on a node id is refused until the first is closed', () => {
    const a = new Generator({ node: 5 })
    const last = a.nextId()
    assert.throws(() => new Generator({ node: 5 }), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'node' &&
      /node id 5 of this layout is already in use on this host by this process \(pid \d+\)/.test(e.message) &&
      /lease/.test(e.message))
    a.close()
    a.close() // idempotent
    assert.throws(() => a.nextId(), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'generator')
    const b = new Generator({ node: 5 })
    assert.ok(b.nextId() > last, 'the next generator on the node id starts after the last one')
    b.close()
  })

  test('cluster: one fixed node id issues from one worker; a file lease gives each its own', () => {
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
    for (const w of fixed.filter((w) => !w.ids)) assert.match(w.error, /node id 6 of this layout is already in use/)
    const leased = run({ lease: pathToFileURL(join(dir, 'leases')).href })
    assert.equal(leased.filter((w) => w.ids).length, 4, JSON.stringify(leased))
    const ids = leased.flatMap((w) => w.ids.map(BigInt))
    assert.equal(new Set(ids).size, ids.length, 'IDs issued twice')
    const nodes = leased.map((w) => new Set(w.ids.map((i) => decompose(BigInt(i)).node)))
    assert.ok(nodes.every((n) => n.size === 1))
    assert.equal(new Set(nodes.map((n) => [...n][0])).size, 4, 'two workers on one node id')
  })
})
