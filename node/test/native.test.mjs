// What only the native addon has: Node Buffers, bound methods, worker threads,
// the package's shape. Skipped (with the reason) under FLAKEID_BACKEND=wasm.
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, test } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import v8 from 'node:v8'
import vm from 'node:vm'
import { Worker } from 'node:worker_threads'
import { FROM_PACKAGE, Generator, ManualClock, decompose, fromBytes, nativeOnly, pkgDir, toBytes } from './backend.mjs'

describe('native addon', { skip: nativeOnly }, () => {
  test('FLAKEID_REQUIRE_NODE=true refuses a generator with no node id (the engine reads it)', () => {
    process.env.FLAKEID_REQUIRE_NODE = 'true'
    try {
      assert.throws(() => new Generator(), (e) => e.code === 'FLAKEID_CONFIG' && e.field === 'node' &&
        /require_node/.test(e.message) && /FLAKEID_NODE/.test(e.message))
      new Generator({ node: 3 }).close()
    } finally {
      delete process.env.FLAKEID_REQUIRE_NODE
    }
  })

  test('nextBuffer() is an 8-byte big-endian Buffer of the next ID', () => {
    const clock = new ManualClock(1_700_000_000_000)
    const g = new Generator({ worker: 3, clock })
    const a = g.nextId()
    const buf = g.nextBuffer()
    assert.ok(Buffer.isBuffer(buf))
    assert.equal(buf.length, 8)
    assert.equal(buf.readBigUInt64BE(0), a + 1n)
    assert.equal(fromBytes(buf), a + 1n)
    assert.ok(Buffer.isBuffer(toBytes(a)))
    assert.deepEqual(toBytes(a + 1n), buf)
    clock.set(1_699_999_999_000)
    assert.throws(() => g.nextBuffer(), { code: 'FLAKEID_CLOCK_BACKWARDS', byMs: 1000 })
  })

  test('nextIds() memory is V8-allocated, so the GC accounts for it', async () => {
    const g = new Generator({ node: 0, overflow: 'borrow' })
    // The 8 MB allocation may start a GC that frees ArrayBuffers earlier tests left
    // as garbage, which made the difference below fall short (seen once in
    // test-dist). So collect them first, let their backing stores be freed (a task
    // after the GC), and collect again: then nothing but the batch changes.
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc')
    gc()
    await nextTurn()
    gc()
    const before = process.memoryUsage().arrayBuffers
    const ids = g.nextIds(1_000_000)
    assert.ok(process.memoryUsage().arrayBuffers - before >= 8_000_000, 'an 8 MB batch shows in arrayBuffers')
    assert.equal(ids.byteLength, 8_000_000)
    assert.throws(() => g.nextIds(2 ** 28), { code: 'FLAKEID_CONFIG', field: 'n' })
  })

  test('tryNextId() returns null instead of waiting for the next tick', () => {
    const clock = new ManualClock(1_700_000_000_000)
    const g = new Generator({ node: 0, layout: 'sonyflake', clock })
    const ids = []
    for (let i = 0; i < 300; i++) {
      const id = g.tryNextId()
      if (id === null) break
      ids.push(id)
    }
    assert.equal(ids.length, 256)
    clock.advance(10)
    assert.equal(typeof g.tryNextId(), 'bigint')
  })

  test('hot methods are bound: they work detached and ignore `this`', () => {
    const g = new Generator({ node: 0, overflow: 'borrow' })
    const { nextId, nextBuffer, tryNextId } = g
    const a = nextId()
    assert.ok(nextBuffer.call({}).readBigUInt64BE(0) > a)
    assert.ok(tryNextId() > a)
    assert.ok(Generator.prototype.nextId.call(g) > a)
    assert.throws(() => Generator.prototype.nextId.call({}))
    assert.deepEqual(Object.keys(g), [], 'bound methods are not enumerable')
  })

  test('IDs stay unique across worker threads with distinct workers', async () => {
    const script = `
      const { parentPort, workerData } = require('node:worker_threads')
      const { Generator } = require(workerData.index)
      const g = new Generator({ datacenter: 1, worker: workerData.worker, overflow: 'borrow' })
      const ids = g.nextIds(50000)
      for (let i = 0; i < 50000; i++) ids[i] = i % 2 ? g.nextId() : ids[i]
      parentPort.postMessage(ids)`
    const runs = [0, 1, 2, 3].map(
      (worker) =>
        new Promise((resolve, reject) => {
          const w = new Worker(script, { eval: true, workerData: { worker, index: join(pkgDir, 'index.js') } })
          w.once('message', resolve)
          w.once('error', reject)
        }),
    )
    const all = (await Promise.all(runs)).flatMap((ids) => [...ids])
    assert.equal(new Set(all).size, 200_000)
    assert.deepEqual([...new Set(all.map((id) => decompose(id).worker))].sort(), [0, 1, 2, 3])
  })
})

describe('leases', { skip: nativeOnly }, () => {
  test('a file lease gives live generators distinct node ids, and release stops a generator', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flakeid-lease-'))
    try {
      const lease = pathToFileURL(dir).href // file:///C:/... on Windows
      const a = new Generator({ lease, layout: 'instagram' })
      const b = new Generator({ lease, layout: 'instagram', leaseTtlMs: 2000 })
      assert.deepEqual([a.node, b.node, a.leased, b.leased], [0, 1, true, true])
      assert.equal(decompose(b.nextId(), 'instagram').node, 1)
      a.releaseLease()
      assert.throws(() => a.nextId(), { code: 'FLAKEID_LEASE' })
      const c = new Generator({ lease, layout: 'instagram' })
      assert.equal(c.node, 0, 'a released id is free again')
      assert.equal(new Generator({ node: 3 }).leased, false)
      assert.throws(() => new Generator({ lease: 'nope://x' }), { code: 'FLAKEID_CONFIG', field: 'lease' })
      assert.throws(() => new Generator({ lease, node: 3 }), { code: 'FLAKEID_CONFIG', field: 'lease' })
      assert.throws(() => new Generator({ lease, leaseTtlMs: 5 }), { code: 'FLAKEID_CONFIG' })
      // Closed before the directory goes: Windows deletes no file another handle has open.
      b.releaseLease()
      c.releaseLease()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('no secret of a lease URL reaches an error: userinfo and query', () => {
    for (const lease of [
      'postgres://app:hunter71@127.0.0.1:70000/db?namespace=x',
      'postgres://app@127.0.0.1:70000/db?password=hunter72&sslpassword=hunter73',
    ]) {
      assert.throws(() => new Generator({ lease }), (err) => {
        assert.equal(err.code, 'FLAKEID_CONFIG')
        assert.match(err.message, /lease URL/)
        assert.doesNotMatch(err.message, /hunter7/)
        return true
      })
    }
  })
})

describe('state', () => {
  test('state keeps a high-water mark across restarts (native); wasm refuses it by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flakeid-state-'))
    try {
      const state = join(dir, 'node5.state')
      if (nativeOnly) {
        // The WebAssembly build has no files.
        assert.throws(() => new Generator({ node: 5, state }), { code: 'FLAKEID_CONFIG', field: 'state' })
        return
      }
      writeFileSync(state, 'flakeid-state 1\nhigh_water_ms 1800000030000\nnode 5\n')
      const clock = new ManualClock(1_800_000_000_000)
      const g = new Generator({ node: 5, state, clock, clockBackwards: 'monotonic' })
      assert.ok(decompose(g.nextId()).timestampMs > 1_800_000_030_000)
      assert.equal(g.leased, false)
      assert.throws(() => new Generator({ node: 5, state }), { code: 'FLAKEID_CONFIG', field: 'state' })
      const e = new Generator({ node: 5, state: join(dir, 'other'), clock })
      writeFileSync(join(dir, 'bad'), 'garbage\n')
      assert.throws(() => new Generator({ node: 5, state: join(dir, 'bad') }), { code: 'FLAKEID_CONFIG', field: 'state' })
      assert.throws(() => new Generator({ state: 5 }), { code: 'FLAKEID_CONFIG', field: 'state' })
      e.releaseLease()
      g.releaseLease()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('package', { skip: nativeOnly }, () => {
  test('installs under its name, with the flake-idgen subpath and types', (t) => {
    const app = mkdtempSync(join(tmpdir(), 'flakeid-app-'))
    try {
      mkdirSync(join(app, 'node_modules', '@flakeid'), { recursive: true })
      // A junction on Windows: no privilege needed (a symlink needs one).
      const link = () => symlinkSync(pkgDir, join(app, 'node_modules', '@flakeid', 'node'), process.platform === 'win32' ? 'junction' : 'dir')
      try {
        link()
      } catch (e) {
        if (e.code !== 'ENOTSUP') throw e
        return t.skip('this system makes no directory junctions (ENOTSUP: Wine 8)')
      }
      const req = createRequire(join(app, 'app.js'))
      const flakeid = req('@flakeid/node')
      const FlakeId = req('@flakeid/node/flake-idgen')
      assert.equal(typeof new flakeid.Generator({ node: 0 }).nextId(), 'bigint')
      assert.ok(Buffer.isBuffer(new FlakeId({ id: 1 }).next()))
      assert.throws(() => req('@flakeid/node/flake-idgen.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
    } finally {
      rmSync(app, { recursive: true, force: true })
    }
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
    assert.equal(pkg.name, '@flakeid/node')
    if (FROM_PACKAGE) {
      // The published package: prebuilt addons, nothing compiled or run at install.
      for (const hook of ['preinstall', 'install', 'postinstall']) assert.equal(pkg.scripts?.[hook], undefined, hook)
      assert.deepEqual(Object.keys(pkg.optionalDependencies).sort(), [
        '@flakeid/node-darwin-arm64',
        '@flakeid/node-darwin-x64',
        '@flakeid/node-linux-arm64-gnu',
        '@flakeid/node-linux-x64-gnu',
        '@flakeid/node-linux-x64-musl',
        '@flakeid/node-win32-x64-gnu',
      ])
      for (const v of Object.values(pkg.optionalDependencies)) assert.equal(v, pkg.version)
      assert.equal(pkg.dependencies['@flakeid/wasm'], pkg.version)
    } else {
      assert.match(pkg.scripts.install, /^npx --yes -p @napi-rs\/cli@\d+\.\d+\.\d+ napi build /)
    }
    const dts = readFileSync(join(pkgDir, 'index.d.ts'), 'utf8')
    for (const s of ['nextId(): bigint', 'nextIds(n: number): BigUint64Array', 'nextBuffer(): Buffer', 'export interface Parts']) {
      assert.ok(dts.includes(s), `index.d.ts declares ${s}`)
    }
    assert.match(readFileSync(join(pkgDir, 'flake-idgen.d.ts'), 'utf8'), /next\(\): Buffer/)
  })
})
