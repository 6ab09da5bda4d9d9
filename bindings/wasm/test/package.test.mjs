// What only the wasm package has to prove; the shared API and every vector run in
// node/test with FLAKEID_BACKEND=wasm. Needs the build: bash bindings/wasm/build.sh
import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const pkg = fileURLToPath(new URL('../pkg/', import.meta.url))
const node = require(`${pkg}node/index.js`)
const { Generator, Layout, ManualClock, decompose, encode, decode, toBytes, fromBytes, compose } = node

const codeOf = (fn) => {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof Error, `an Error, got ${e}`)
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `a trap (panic) crossed the boundary: ${e.message}`)
    return e.code
  }
  return 'returned'
}

describe('the package', () => {
  test('package.json names @flakeid/wasm, with a Node and a web build and types', () => {
    const meta = JSON.parse(readFileSync(`${pkg}package.json`, 'utf8'))
    assert.equal(meta.name, '@flakeid/wasm')
    assert.equal(meta.exports['.'].node.default, './node/index.js')
    assert.equal(meta.exports['.'].default.default, './web/flakeid.js')
    for (const f of ['node/index.js', 'node/index.d.ts', 'web/flakeid_bg.wasm', 'web/flakeid.js', 'web/flakeid.d.ts']) {
      assert.ok(statSync(`${pkg}${f}`).size > 0, f)
    }
    const dts = readFileSync(`${pkg}node/index.d.ts`, 'utf8')
    for (const decl of ['nextId(): bigint', 'nextIds(n: number): BigUint64Array', 'tryNextId(): bigint | null', 'decompose(id: bigint | string | number, layout?: LayoutLike): Parts', 'interface GeneratorOptions', 'export class ManualClock', 'export class Sealer', 'interface SealerOptions', 'export class UuidGenerator', 'uuid7(options?: { msecs?: number } | null): string', 'uuid7<T extends Uint8Array>(options: { msecs?: number } | null | undefined, buf: T, offset?: number): T', 'interface UuidGeneratorOptions']) {
      assert.ok(dts.includes(decl), `index.d.ts declares ${decl}`)
    }
  })

  // A dependency or feature that grows the optimized .wasm past its budget fails
  // here: find the weight (function sizes from the name section) before raising the
  // budget, say what the growth buys in the commit and CHANGELOG.md, and update the
  // size in docs/performance.md ("WebAssembly"). build.sh builds aes, fpe and
  // flakeid-seal at opt-level "s" because LLVM unrolls the software AES key schedules
  // at -O3 (20 KB).
  test('the optimized .wasm is within the 236 KB budget', () => {
    const wasm = readFileSync(`${pkg}web/flakeid_bg.wasm`)
    assert.ok(WebAssembly.validate(wasm))
    assert.ok(wasm.length <= 236 * 1024, `optimized .wasm is ${wasm.length} bytes, over ${236 * 1024}`)
  })

  test('the web build runs in Node too (initSync), with the same answers', async () => {
    const web = await import(`${pkg}web/flakeid.js`)
    web.initSync({ module: readFileSync(`${pkg}web/flakeid_bg.wasm`) })
    const id = compose(1505914988849, (17 << 5) | 25, 0)
    assert.equal(id, 910499571847892992n)
    assert.equal(web.compose(1505914988849, (17 << 5) | 25, 0), id)
    assert.deepEqual({ ...web.decompose(id), date: 0 }, { ...decompose(id), date: 0 })
    const g = new web.Generator({ node: 5, layout: 'instagram' })
    assert.equal(web.decompose(g.nextId(), 'instagram').node, 5)
    // The 128-bit family's random bits come from the host's crypto.getRandomValues.
    const u = new web.UuidGenerator()
    const [a, b] = [u.uuid7(), web.uuid7()]
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.notEqual(a.slice(19), b.slice(19))
    assert.equal(web.uuid7TimestampMs(web.ulid()) >= web.uuid7TimestampMs(a), true)
  })
})

describe('the boundary', () => {
  test('bigints outside 0..2^64-1 are refused, never wrapped', () => {
    for (const bad of [2n ** 64n, -1n, 2n ** 70n]) {
      assert.equal(codeOf(() => encode(bad)), 'FLAKEID_CONFIG', String(bad))
      assert.equal(codeOf(() => decompose(bad, 'flake')), 'FLAKEID_CONFIG', String(bad))
      assert.equal(codeOf(() => toBytes(bad)), 'FLAKEID_CONFIG', String(bad))
    }
    assert.equal(encode(2n ** 64n - 1n, 'hex'), 'ffffffffffffffff')
    assert.equal(decode('ffffffffffffffff', 'hex'), 2n ** 64n - 1n)
    assert.equal(codeOf(() => new Generator({ node: 2n ** 64n + 1n })), 'FLAKEID_CONFIG')
    assert.equal(codeOf(() => new Generator({ node: -1 })), 'FLAKEID_CONFIG')
    assert.equal(codeOf(() => new Generator({ worker: 1.5 })), 'FLAKEID_CONFIG')
    assert.equal(codeOf(() => new ManualClock(-5)), 'FLAKEID_CONFIG')
  })

  test('odd inputs throw Errors (never a trap), and the module keeps working', () => {
    const odd = [undefined, null, {}, [], 'x', '', -0, NaN, Infinity, -Infinity, 2 ** 53, 2 ** 64, Symbol('s'), () => 1, true]
    const g = new Generator({ node: 1 })
    const l = Layout.preset('snowflake')
    const calls = [
      (v) => new Generator(v),
      (v) => new Generator({ layout: v }),
      (v) => new Generator({ node: 0, clock: v }),
      (v) => new Generator({ node: v }),
      (v) => new Generator({ overflow: v }),
      (v) => new Layout(v),
      (v) => new Layout({ timeBits: v }),
      (v) => Layout.preset(v),
      (v) => decompose(v),
      (v) => decompose(1n, v),
      (v) => encode(v),
      (v) => encode(1n, v),
      (v) => decode(v),
      (v) => fromBytes(v),
      (v) => compose(v, 0, 0),
      (v) => g.nextIds(v),
      (v) => l.compose(1_700_000_000_000, v, 0),
      (v) => l.idRange(v, v),
      (v) => new ManualClock(v, v),
    ]
    for (const call of calls) for (const v of odd) codeOf(() => call(v))
    assert.ok(g.nextId() > 0n)
    assert.equal(g.nextIds(3).length, 3)
  })

  test('nextBuffer and toBytes give a Buffer in Node', () => {
    const g = new Generator({ node: 9 })
    const b = g.nextBuffer()
    assert.ok(Buffer.isBuffer(b))
    assert.equal(b.length, 8)
    assert.equal(decompose(b.readBigUInt64BE(0)).node, 9)
    assert.ok(Buffer.isBuffer(toBytes(1n)))
    assert.equal(fromBytes(toBytes(910499571847892992n)), 910499571847892992n)
  })

  test('tryNextId() returns null instead of waiting; nextIds caps n by the core rule, as @flakeid/node does', () => {
    const clock = new ManualClock(1_700_000_000_000)
    const g = new Generator({ node: 0, layout: 'sonyflake', clock })
    let n = 0
    while (g.tryNextId() !== null) n++
    assert.equal(n, 256, 'one 10 ms tick of sonyflake')
    clock.advance(10)
    assert.equal(typeof g.tryNextId(), 'bigint')
    assert.throws(() => g.nextIds(2 ** 28), { code: 'FLAKEID_CONFIG', field: 'n' })
    assert.equal(g.nextIds(0).length, 0)
  })

  test('a ManualClock passed to a generator stays the caller\'s (shared, not consumed)', () => {
    const clock = new ManualClock(1_700_000_000_000)
    const layout = Layout.preset('discord')
    const g = new Generator({ clock, layout, node: 1 })
    clock.advance(5)
    assert.equal(decompose(g.nextId(), layout).timestampMs, 1_700_000_000_005)
    assert.equal(layout.name, 'discord', 'the Layout object still works')
    assert.equal(clock.nowMs(), 1_700_000_000_005)
  })
})

describe('the host clock', () => {
  const spin = (ms) => {
    const end = Date.now() + ms
    while (Date.now() < end);
  }

  test('IDs carry the current time across tasks', async () => {
    const g = new Generator({ node: 1 })
    const a = decompose(g.nextId()).timestampMs
    await new Promise((r) => setTimeout(r, 30))
    const before = Date.now()
    const b = decompose(g.nextId()).timestampMs
    assert.ok(b >= before && b - a >= 25, `second ID at ${b}, first at ${a}, clock ${before}`)
  })

  test('within one synchronous task the cached time is re-read at least every 64 IDs', () => {
    const g = new Generator({ node: 1 })
    g.nextId()
    spin(20)
    const before = Date.now()
    let last
    for (let i = 0; i < 66; i++) last = decompose(g.nextId()).timestampMs
    assert.ok(last >= before, `after 66 IDs the time is fresh: ${last} >= ${before}`)
  })

  test('overflow "wait" holds the layout cap; "borrow" runs ahead within maxBorrowMs', () => {
    const tiny = new Layout({ timeBits: 41, nodeBits: 10, sequenceBits: 2, epochMs: 1_600_000_000_000 })
    const wait = new Generator({ node: 0, layout: tiny })
    const ids = wait.nextIds(40) // 4 per ms: ten ticks, at least 9 ms apart
    const ms = [...ids].map((id) => tiny.decompose(id).timestampMs)
    // Measured on the IDs' own ticks: the generator's clock is Date.now() cached within
    // the current task (js/clock.js), so its first tick may be a ms before a fresh read.
    assert.ok(ms[39] - ms[0] >= 9 && Date.now() >= ms[39], 'waited for later ticks')
    assert.ok(ms.every((m, i) => i < 4 || m > ms[i - 4]), 'at most 4 IDs per ms')
    const borrow = new Generator({ node: 0, layout: tiny, overflow: 'borrow', maxBorrowMs: 50 })
    const t1 = Date.now()
    const b = borrow.nextIds(100)
    assert.ok(Date.now() - t1 < 25, 'borrowing does not wait')
    assert.ok(tiny.decompose(b[99]).timestampMs <= Date.now() + 50)
  })
})
