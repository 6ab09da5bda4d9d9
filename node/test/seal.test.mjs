// Sealer beyond the shared vectors (vectors.test.mjs runs seal.json), on the backend
// chosen by FLAKEID_BACKEND: errors that name the field, no key bytes in any message,
// properties with fast-check, and docs/sealing.md's JS example run as written.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { Generator, Layout, Sealer, api, expectError } from './backend.mjs'

const KEY = new Uint8Array(16).map((_, i) => i)
const runs = { numRuns: 300 }

test('seals, unseals, and stays in the layout', () => {
  const sealer = new Sealer(KEY)
  const id = new Generator({ worker: 1 }).nextId()
  const pub = sealer.seal(id)
  assert.equal(typeof pub, 'bigint')
  assert.ok(pub !== id && pub >= 0n && pub < 2n ** 63n)
  assert.equal(sealer.unseal(pub), id)
  assert.equal(sealer.unseal(String(pub)), id, 'a decimal string is an ID too')
  assert.equal(sealer.bits, 63)
  assert.equal(sealer.maxId, 2n ** 63n - 1n)
  assert.equal(new Sealer(KEY, { layout: 'discord' }).bits, 64)
  assert.equal(new Sealer(KEY, { layout: Layout.preset('discord') }).bits, 64)
  assert.equal(new Sealer(KEY, {}).seal(id), pub)
  assert.equal(new Sealer(KEY, { tweak: new Uint8Array(0) }).seal(id), pub)
  assert.notEqual(new Sealer(KEY, { tweak: new TextEncoder().encode('orders') }).seal(id), pub)
})

test('a bad key, layout or option is FLAKEID_CONFIG naming it', () => {
  for (const key of [new Uint8Array(0), new Uint8Array(15), new Uint8Array(17), new Uint8Array(33)]) {
    const e = expectError(() => new Sealer(key), 'config', { field: 'key' })
    assert.match(e.message, /16, 24 or 32 bytes/)
  }
  for (const key of ['000102030405060708090a0b0c0d0e0f', 42, undefined, null, [1, 2], {}]) {
    expectError(() => new Sealer(key), 'config', { field: 'key' })
  }
  const small = new Layout({ timeBits: 7, nodeBits: 4, sequenceBits: 8 })
  expectError(() => new Sealer(KEY, { layout: small }), 'config', { field: 'layout' })
  expectError(() => new Sealer(KEY, { layout: 42 }), 'config', { field: 'layout' })
  expectError(() => new Sealer(KEY, { tweak: 'orders' }), 'config', { field: 'tweak' })
  expectError(() => new Sealer(KEY, { twaek: new Uint8Array(1) }), 'config', { field: 'options' })
  expectError(() => new Sealer(KEY, 'snowflake'), 'config', { field: 'options' })
})

test('an out-of-range or mistyped ID is FLAKEID_CONFIG naming id', () => {
  const sealer = new Sealer(KEY)
  for (const op of ['seal', 'unseal']) {
    for (const id of [2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, -1n]) {
      expectError(() => sealer[op](id), 'config', { field: 'id' })
    }
    expectError(() => sealer[op](5), 'config', { field: 'id' })
  }
})

test('no key bytes in any message', () => {
  const key = new Uint8Array(31).fill(0xab)
  const e = expectError(() => new Sealer(key), 'config', { field: 'key' })
  assert.doesNotMatch(e.message, /ab|AB|171/)
})

test('unseal(seal(x)) === x, in range, for any ID and tweak', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), fc.uint8Array({ maxLength: 20 }), (id, tweak) => {
      const sealer = new Sealer(KEY, { tweak })
      const sealed = sealer.seal(id)
      return sealed >= 0n && sealed < 2n ** 63n && sealer.unseal(sealed) === id
    }),
    runs,
  )
  const wide = new Sealer(KEY, { layout: 'discord' })
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (id) => wide.unseal(wide.seal(id)) === id), runs)
})

test("docs/sealing.md's JS example runs as written", () => {
  // FLAKEID_DOCS: the repository's docs/ when the tests run from a copy (tests/dist/run.py).
  const path = process.env.FLAKEID_DOCS
    ? join(process.env.FLAKEID_DOCS, 'sealing.md')
    : fileURLToPath(new URL('../../docs/sealing.md', import.meta.url))
  const docs = readFileSync(path, 'utf8')
  const blocks = [...docs.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.equal(blocks.length, 1, 'docs/sealing.md has one JS example')
  const dir = mkdtempSync(join(tmpdir(), 'flakeid-seal-'))
  writeFileSync(join(dir, 'seal.key'), `${randomBytes(32).toString('hex')}\n`)
  const cwd = process.cwd()
  const base = createRequire(import.meta.url)
  const req = (name) => (name === '@flakeid/node' || name === '@flakeid/wasm' ? api : base(name))
  const lines = []
  process.chdir(dir)
  try {
    new Function('require', 'console', blocks[0])(req, { log: (...a) => lines.push(a.join(' ')) })
  } finally {
    process.chdir(cwd)
  }
  assert.equal(lines.length, 1)
  assert.match(lines[0], /^[0-9A-Za-z]{11}$/)
})
