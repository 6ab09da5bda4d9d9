// The 128-bit family from JS: UuidGenerator's forms, its options and
// errors (the core's), monotonic within a millisecond, the process's shared
// generator, IDs through JSON as text, and a real `cluster` whose workers never
// repeat one another. The shared vectors (tests/vectors/uuid.json): vectors.test.mjs.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import {
  ManualClock, UuidGenerator, expectError, formatUuid, nativeOnly, parseTypeId, parseUuid, pkgDir, typeid, ulid, ulidToUuid,
  uuid7, uuid7TimestampMs, uuidToUlid, uuidVersion,
} from './backend.mjs'

const T = 1_764_000_000_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('UuidGenerator', () => {
  test('every form of the next ID, each above the last, 65,536 in a millisecond then the next', () => {
    const g = new UuidGenerator({ clock: new ManualClock(T), maxBorrowMs: 10 })
    const ids = Array.from({ length: 70_000 }, () => g.uuid7())
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} then ${ids[i]}`)
    assert.ok(ids.every((u) => UUID.test(u)))
    assert.deepEqual(new Set(ids.map(uuid7TimestampMs)), new Set([T, T + 1]))
    const bytes = g.uuid7Bytes()
    assert.ok(bytes instanceof Uint8Array && bytes.length === 16)
    assert.ok(formatUuid(bytes) > ids.at(-1))
    const big = g.uuid7BigInt()
    assert.equal(typeof big, 'bigint')
    assert.equal(formatUuid(big), `${big.toString(16).padStart(32, '0')}`.replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'))
    assert.ok(formatUuid(big) > formatUuid(bytes))
    const u = g.ulid()
    assert.match(u, /^[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.ok(ulidToUuid(u) > formatUuid(big))
    const t = g.typeid('order')
    assert.equal(parseTypeId(t).prefix, 'order')
    assert.ok(parseTypeId(t).uuid > ulidToUuid(u))
    assert.equal(g.uuid7 === g.uuid7, true)
    const s = g.stats()
    assert.equal(s.idsIssued, 70_004)
    assert.equal(s.leadMs, 1)
    assert.equal(s.reseeds, 0)
  })

  test('the bound uuid7 works detached, as a method does', { skip: nativeOnly }, () => {
    const g = new UuidGenerator()
    const next = g.uuid7
    assert.match(next(), UUID)
    assert.match(UuidGenerator.prototype.uuid7.call(g), UUID)
  })

  test('options by name through the core, with the core\'s errors', () => {
    expectError(() => new UuidGenerator({ maxBorrowMs: 1e12 }), 'config', { field: 'max_borrow_ms' })
    expectError(() => new UuidGenerator({ overflow: 'sometimes' }), 'config', { field: 'overflow' })
    expectError(() => new UuidGenerator({ clockBackwards: 3 }), 'config', { field: 'clock_backwards' })
    const node = expectError(() => new UuidGenerator({ node: 3 }), 'config', { field: 'node' })
    assert.match(node.message, /does not apply to the 128-bit generator/)
    expectError(() => new UuidGenerator({ layout: 'snowflake' }), 'config', { field: 'layout' })
    const unknown = expectError(() => new UuidGenerator({ maxBorowMs: 3 }), 'config', { field: 'options' })
    assert.match(unknown.message, /maxBorrowMs/)
    assert.doesNotMatch(unknown.message, /datacenter/)
    expectError(() => new UuidGenerator({ clock: {} }), 'config', { field: 'clock' })
    expectError(() => new UuidGenerator(5), 'config', { field: 'options' })
    new UuidGenerator({ overflow: 'wait', clockBackwards: 'monotonic', maxWaitMs: 5, maxBorrowMs: undefined })
  })

  test('a clock behind the last ID: the core\'s policy', () => {
    const clock = new ManualClock(T)
    // (Within maxBorrowMs a rollback is a lead, as in the 64-bit generator.)
    const g = new UuidGenerator({ clock, maxBorrowMs: 10 })
    g.uuid7()
    clock.set(T - 50)
    expectError(() => g.uuid7(), 'clock_backwards', { byMs: 50 })
    const m = new UuidGenerator({ clock, clockBackwards: 'monotonic', maxBorrowMs: 10 })
    clock.set(T)
    const a = m.uuid7()
    clock.set(T - 50)
    assert.ok(m.uuid7() > a)
    assert.equal(m.stats().clockRollbacks, 1)
  })

  test('closed: every form refuses with the core\'s error', () => {
    const g = new UuidGenerator()
    g.close()
    g.close()
    for (const f of [() => g.uuid7(), () => g.uuid7Bytes(), () => g.uuid7BigInt(), () => g.ulid(), () => g.typeid('x')]) {
      expectError(f, 'config', { field: 'generator' })
    }
  })

  test('wrong argument types are the binding\'s typed errors, naming the field', () => {
    const g = new UuidGenerator()
    expectError(() => g.typeid(5), 'config', { field: 'prefix' })
    expectError(() => typeid(), 'config', { field: 'prefix' })
    expectError(() => parseUuid(5), 'config', { field: 'text' })
    expectError(() => formatUuid(5), 'config', { field: 'value' })
    expectError(() => formatUuid(-1n), 'config', { field: 'value' })
    expectError(() => formatUuid(1n << 128n), 'config', { field: 'value' })
    expectError(() => formatUuid(new Uint8Array(15)), 'parse')
    assert.equal(formatUuid((1n << 128n) - 1n), 'ffffffff-ffff-ffff-ffff-ffffffffffff')
    expectError(() => uuid7TimestampMs('00000000-0000-4000-8000-000000000000'), 'parse', { position: 48 })
    assert.equal(uuidVersion('00000000-0000-4000-8000-000000000000'), 4)
  })
})

describe('the process\'s shared generator', () => {
  test('uuid7(), ulid(), typeid(prefix): one generator, increasing', () => {
    const a = uuid7()
    const b = ulid()
    const c = typeid('user')
    assert.match(a, UUID)
    assert.ok(a < ulidToUuid(b) && ulidToUuid(b) < parseTypeId(c).uuid)
    assert.equal(uuidToUlid(a).length, 26)
    expectError(() => typeid('User'), 'config', { field: 'prefix' })
  })
})

test('IDs leave through JSON as text and come back with plain JSON.parse', () => {
  const g = new UuidGenerator()
  const row = { id: g.uuid7(), ulid: g.ulid(), ref: g.typeid('order') }
  const back = JSON.parse(JSON.stringify(row))
  assert.deepEqual(back, row)
  assert.equal(typeof back.id, 'string')
  assert.equal(formatUuid(back.id), row.id)
  // The TypeID's time is its UUID's; made after `id`, it may be a millisecond later.
  assert.equal(uuid7TimestampMs(back.ref), uuid7TimestampMs(parseTypeId(row.ref).uuid))
  assert.ok(uuid7TimestampMs(back.ref) >= uuid7TimestampMs(back.id))
  assert.throws(() => JSON.stringify({ id: g.uuid7BigInt() }), TypeError, 'a bigint does not go through JSON')
})

test('cluster: each worker\'s generator, even at the same millisecond, never repeats another\'s', () => {
  const script = fileURLToPath(new URL('./uuid-cluster.cjs', import.meta.url))
  const r = spawnSync(process.execPath, [script], {
    cwd: pkgDir, encoding: 'utf8', timeout: 60_000, env: { ...process.env }, maxBuffer: 64 << 20,
  })
  assert.equal(r.status, 0, r.stderr)
  const workers = JSON.parse(r.stdout)
  assert.equal(workers.length, 4)
  assert.equal(new Set(workers.map((w) => w.pid)).size, 4)
  for (const w of workers) {
    for (const ids of [w.manual, w.shared]) {
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `worker ${w.pid} went back`)
    }
  }
  // Same clock, same counters: the first 64 bits of each worker's n-th ID agree...
  const head = (u) => u.replaceAll('-', '').slice(0, 16)
  assert.ok(workers.every((w) => w.manual.every((u, i) => head(u) === head(workers[0].manual[i]))))
  // ...and the random bits alone keep them apart.
  const all = workers.flatMap((w) => [...w.manual, ...w.shared])
  assert.equal(new Set(all).size, all.length, 'a UUID issued twice')
})

test('a batch follows the calls before it and precedes those after, as JSON.parse reads it back', () => {
  const clock = new ManualClock(1_764_000_000_000)
  const g = new UuidGenerator({ clock, maxBorrowMs: 10 })
  const before = g.uuid7()
  const batch = JSON.parse(JSON.stringify(g.uuid7s(70_000)))
  const after = g.uuid7()
  const all = [before, ...batch, after]
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1] < all[i], `not increasing at ${i}`)
  assert.ok(batch.every((u) => uuidVersion(u) === 7))
  assert.deepEqual(g.uuid7s(0), [])
  const over = expectError(() => g.uuid7s(2 ** 20 + 1), 'config', { field: 'n' })
  assert.match(over.message, /0\.\.=1048576 for a batch of UUIDv7 objects or text/)
  expectError(() => g.uuid7s(-1), 'config', { field: 'n' })
  assert.equal(g.stats().idsIssued, 70_002, 'a refused batch costs no ID')
  // The prototype's typed method is the same batch.
  const typed = UuidGenerator.prototype.uuid7s.call(g, 3)
  assert.ok(typed.length === 3 && g.uuid7() > typed[2] && typed[0] > after)
})

// A 256 MiB heap: the largest batch fits, a larger one is refused by name before
// anything is allocated (V8 ends a process whose heap runs out: no error to catch).
test('a batch under a small heap: the limit fits, beyond it is refused, never a dead process', () => {
  const backend = new URL('./backend.mjs', import.meta.url).href
  const code = `import { UuidGenerator } from ${JSON.stringify(backend)}
    const g = new UuidGenerator()
    const made = g.uuid7s(2 ** 20)
    let refused
    try { g.uuid7s(2 ** 23) } catch (e) { refused = { code: e.code, field: e.field } }
    console.log(JSON.stringify({ made: made.length, last: made.at(-1) < g.uuid7(), refused }))`
  const r = spawnSync(process.execPath, ['--max-old-space-size=256', '--input-type=module', '-e', code], {
    cwd: pkgDir, encoding: 'utf8', timeout: 120_000, env: { ...process.env },
  })
  assert.equal(r.status, 0, r.stderr.slice(-2000))
  assert.deepEqual(JSON.parse(r.stdout), {
    made: 2 ** 20, last: true, refused: { code: 'FLAKEID_CONFIG', field: 'n' },
  })
})

describe('uuid7(options, buf, offset), as npm uuid\'s v7', () => {
  const forms = {
    'an instance': (g) => g.uuid7.bind(g),
    'the prototype': (g) => (...a) => UuidGenerator.prototype.uuid7.apply(g, a),
    'the module (shared)': () => uuid7,
  }
  for (const [name, of] of Object.entries(forms)) {
    test(`${name}: the 16 bytes at offset, buf returned, the rest untouched, in order`, () => {
      const g = new UuidGenerator()
      const call = of(g)
      const before = call()
      const buf = new Uint8Array(40).fill(0xee)
      assert.equal(call(undefined, buf, 20), buf)
      assert.ok(buf.subarray(0, 20).every((b) => b === 0xee) && buf.subarray(36).every((b) => b === 0xee))
      const text = formatUuid(buf.subarray(20, 36))
      assert.ok(UUID.test(text) && before < text && text < call(), `${before} ${text}`)
      const b = Buffer.alloc(16)
      assert.equal(call({ msecs: T }, b), b, 'a Buffer, offset 0 by default')
      assert.equal(uuid7TimestampMs(formatUuid(b)), T)
      assert.equal(typeof call(null, undefined), 'string', 'no buf: the text')
    })
  }

  test('a buf or offset that cannot hold the UUID is refused by name before an ID is taken', () => {
    const g = new UuidGenerator()
    const buf = new Uint8Array(48)
    const err = expectError(() => g.uuid7(undefined, buf, 33), 'config', { field: 'offset' })
    assert.match(err.message, /0\.\.=32 \(16 bytes in a buf of 48\), got 33/)
    for (const offset of [-1, 1.5, '2', 2n]) expectError(() => g.uuid7({}, buf, offset), 'config', { field: 'offset' })
    for (const bad of [[], {}, 'x', new Uint16Array(16), new Uint8Array(15)]) {
      expectError(() => g.uuid7(undefined, bad), 'config', { field: 'buf' })
    }
    expectError(() => uuid7(undefined, new Uint8Array(8)), 'config', { field: 'buf' })
    assert.ok(buf.every((b) => b === 0), 'nothing written')
    assert.equal(g.stats().idsIssued, 0, 'a refused call costs no ID')
  })

  test('seq (npm uuid\'s counter) is refused, pointing to composeUuid7', () => {
    const err = expectError(() => new UuidGenerator().uuid7({ seq: 1 }), 'config', { field: 'options' })
    assert.match(err.message, /composeUuid7/)
    expectError(() => uuid7({ seq: 1 }, new Uint8Array(16)), 'config', { field: 'options' })
  })
})

test('uuid7Bytes() gives a new array each call, increasing with the text form around it', () => {
  const g = new UuidGenerator()
  const a = g.uuid7()
  const b = g.uuid7Bytes()
  const c = g.uuid7Bytes()
  const d = g.uuid7()
  assert.ok(b instanceof Uint8Array && b.length === 16 && b !== c)
  const text = (bytes) => formatUuid(bytes)
  assert.ok(a < text(b) && text(b) < text(c) && text(c) < d, `${a} ${text(b)} ${text(c)} ${d}`)
  const kept = text(b)
  b.fill(0)
  assert.equal(text(c) > kept, true, 'writing one array changes no other')
  assert.equal(uuidVersion(g.uuid7Bytes()), 7)
})
