// `@flakeid/node/flake-idgen` against the real flake-idgen 1.4 (a devDependency).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { Layout, ManualClock, decompose, fromBytes, nativeOnly, pkgDir } from './backend.mjs'

const require = createRequire(import.meta.url)
const FlakeId = nativeOnly ? null : require(`${pkgDir}/flake-idgen.js`)
const Original = require('flake-idgen')
const OVERFLOW = 'Sequence exceeded its maximum value. Provide callback function to handle sequence overflow'

const props = (g) => ({ id: g.id, datacenter: g.datacenter, worker: g.worker, genId: g.genId, epoch: g.epoch, seqMask: g.seqMask })
const nextAsync = (g) => new Promise((resolve, reject) => g.next((err, id) => (err ? reject(err) : resolve(id))))

describe('flake-idgen drop-in', { skip: nativeOnly }, () => {
  test('sets id, datacenter, worker (and the rest) as flake-idgen 1.4 does', () => {
    const cases = [
      undefined, {}, { id: 0 }, { id: 1023 }, { id: 5, datacenter: 9 }, { datacenter: 3, worker: 7 },
      { worker: 31 }, { datacenter: 31 }, { epoch: 1_300_000_000_000 }, { epoch: new Date(1_400_000_000_000) },
      { seqMask: 0xff }, { seqMask: 0 },
    ]
    for (const o of cases) {
      const ours = new FlakeId(o)
      assert.deepEqual(props(ours), props(new Original(o)), JSON.stringify(o))
      assert.equal('datacenter' in ours, !(o && 'id' in o), JSON.stringify(o))
      assert.deepEqual(ours.options, o || {})
    }
    assert.equal(FlakeId.POW10, Original.POW10)
    assert.equal(FlakeId.POW26, Original.POW26)
  })

  test('next() is the same 8-byte layout as flake-idgen: the flake preset', () => {
    for (const o of [{ id: 0x2a5 }, { datacenter: 17, worker: 25 }]) {
      const ours = new FlakeId(o)
      const theirs = new Original(o)
      const before = Date.now()
      const [a, b] = [ours.next(), theirs.next()]
      const after = Date.now()
      for (const buf of [a, b]) {
        assert.ok(Buffer.isBuffer(buf))
        assert.equal(buf.length, 8)
        const p = decompose(fromBytes(buf), 'flake')
        assert.equal(p.node, theirs.id)
        assert.equal(p.sequence, 0)
        assert.ok(p.timestampMs >= before - 100 && p.timestampMs <= after, `${before} <= ${p.timestampMs} <= ${after}`)
      }
      // Same node and sequence: the low 22 bits are identical.
      assert.equal(fromBytes(a) & 0x3fffffn, fromBytes(b) & 0x3fffffn)
    }
  })

  test('the epoch is subtracted as flake-idgen does', () => {
    const epoch = 1_600_000_000_000
    const layout = new Layout({ timeBits: 42, datacenterBits: 5, workerBits: 5, sequenceBits: 12, epochMs: epoch })
    const before = Date.now()
    const ours = decompose(fromBytes(new FlakeId({ id: 9, epoch }).next()), layout)
    const theirs = decompose(fromBytes(new Original({ id: 9, epoch }).next()), layout)
    for (const p of [ours, theirs]) {
      assert.equal(p.node, 9)
      assert.ok(Math.abs(p.timestampMs - before) < 1000)
    }
    const clock = new ManualClock(epoch + 1234)
    assert.equal(fromBytes(new FlakeId({ epoch, clock }).next()) >> 22n, 1234n)
  })

  test('at most seqMask + 1 IDs per ms, then next() throws like flake-idgen', () => {
    const g = new FlakeId({ id: 1, seqMask: 0xf })
    const ids = []
    let err
    for (let i = 0; i < 1_000_000 && !err; i++) {
      try {
        ids.push(fromBytes(g.next()))
      } catch (e) {
        err = e
      }
    }
    assert.ok(err, 'overflow must throw')
    assert.equal(err.message, OVERFLOW)
    const last = decompose(ids.at(-1), 'flake').timestampMs
    const inLastMs = ids.map((id) => decompose(id, 'flake')).filter((p) => p.timestampMs === last)
    assert.deepEqual(inLastMs.map((p) => p.sequence), [...Array(16).keys()])
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
  })

  test('a rollback throws without a callback and goes to the callback with one', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const g = new FlakeId({ id: 1, clock })
    g.next()
    clock.set(1_699_999_999_990)
    assert.throws(() => g.next(), { code: 'FLAKEID_CLOCK_BACKWARDS', byMs: 10 })
    await assert.rejects(nextAsync(g), { code: 'FLAKEID_CLOCK_BACKWARDS', byMs: 10 })
    clock.set(1_700_000_000_000)
    assert.equal(decompose(fromBytes(await nextAsync(g)), 'flake').sequence, 1)
  })

  test('next(cb) calls back asynchronously and waits across overflow', async () => {
    const g = new FlakeId({ datacenter: 2, worker: 3, seqMask: 0x7 })
    let sync = true
    const all = []
    const done = new Promise((resolve, reject) => {
      for (let i = 0; i < 200; i++) {
        g.next((err, id) => {
          if (err) return reject(err)
          assert.equal(sync, false, 'never called back synchronously')
          all.push(id)
          if (all.length === 200) resolve()
        })
      }
    })
    sync = false
    await done
    const parts = all.map((b) => decompose(fromBytes(b), 'flake'))
    assert.equal(new Set(all.map((b) => b.toString('hex'))).size, 200)
    assert.ok(parts.every((p) => p.node === 2 * 32 + 3 && p.sequence <= 7))
    const perMs = Map.groupBy ? Map.groupBy(parts, (p) => p.timestampMs) : null
    if (perMs) for (const ps of perMs.values()) assert.ok(ps.length <= 8)
    assert.ok(new Set(parts.map((p) => p.timestampMs)).size >= 25, 'spread over at least 200 / 8 ms')
  })

  test('out-of-range options are RangeErrors (flake-idgen would mask them)', () => {
    const bad = [
      { id: 1024 }, { id: -1 }, { id: 1.5 }, { datacenter: 32 }, { worker: 32 }, { worker: -3 },
      { seqMask: 6 }, { seqMask: 0x1fff }, { epoch: Date.now() + 3_600_000 }, { epoch: -5 },
    ]
    for (const o of bad) {
      assert.throws(() => new FlakeId(o), (e) => e instanceof RangeError && e.code === 'FLAKEID_CONFIG', JSON.stringify(o))
    }
    assert.equal(new Original({ id: 1024 }).id, 0, 'flake-idgen masks silently')
  })
})
