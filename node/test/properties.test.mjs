// Properties with fast-check, on the backend chosen by FLAKEID_BACKEND:
// every encoding parses back; any text is an ID or a FLAKEID_PARSE error with a
// position inside it; compose and decompose are inverses; a wrong argument is a
// FLAKEID_CONFIG error, never another kind of exception.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { Layout, decode, encode } from './backend.mjs'

const ENCODINGS = ['decimal', 'hex', 'base32', 'base62']
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
const runs = { numRuns: 500 }

test('every encoding parses back', () => {
  fc.assert(
    fc.property(u64, fc.constantFrom(...ENCODINGS), (id, enc) => decode(encode(id, enc), enc) === id),
    runs,
  )
})

test('any text is an ID or a FLAKEID_PARSE error pointing inside it', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.constantFrom(...ENCODINGS), (text, enc) => {
      try {
        const id = decode(text, enc)
        return typeof id === 'bigint' && id >= 0n && id < 2n ** 64n
      } catch (e) {
        assert.equal(e.code, 'FLAKEID_PARSE', e.message)
        assert.ok(e.position >= 0 && e.position <= [...text].length, `${e.position} for ${JSON.stringify(text)}`)
        return true
      }
    }),
    runs,
  )
})

test('compose and decompose are inverses on every preset', () => {
  for (const name of ['snowflake', 'flake', 'discord', 'sonyflake', 'instagram']) {
    const l = Layout.preset(name)
    const arb = fc.record({
      tick: fc.integer({ min: 0, max: Math.floor((l.lastTimestampMs - l.epochMs) / l.tickMs) }),
      node: fc.integer({ min: 0, max: Number(l.maxNode) }),
      seq: fc.integer({ min: 0, max: Number(l.maxSequence) }),
    })
    fc.assert(
      fc.property(arb, ({ tick, node, seq }) => {
        const ts = l.epochMs + tick * l.tickMs
        const id = l.compose(ts, node, seq)
        const p = l.decompose(id)
        return p.node === node && p.sequence === seq && p.timestampMs === ts
      }),
      runs,
    )
  }
})

test('a wrong argument type is FLAKEID_CONFIG, never another exception', () => {
  const anything = fc.oneof(fc.anything(), fc.bigInt(), fc.double())
  fc.assert(
    fc.property(anything, fc.constantFrom('hex', 'nope', 7, null), (id, enc) => {
      try {
        encode(id, enc)
      } catch (e) {
        assert.ok(['FLAKEID_CONFIG', 'FLAKEID_PARSE'].includes(e.code), `${e.code}: ${e.message}`)
      }
      return true
    }),
    runs,
  )
})
