// @flakeid/node/json: bigints through JSON.stringify and JSON.parse, digit for digit.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { FROM_PACKAGE, api } from './backend.mjs'

const require = createRequire(import.meta.url)
const { replacer, reviver, stringify, parse, installToJSON } = require(FROM_PACKAGE ? '@flakeid/node/json' : '../frameworks/json.js')

const MAX = 2n ** 64n - 1n
const BIG = 910499571847892992n // past 2^53: a double would round it

// The engine's error (its message, `position`), with the JSON key as `field`.
function parseError(fn, field) {
  assert.throws(fn, (e) => e.code === 'FLAKEID_PARSE' && e.field === field && /^parse error: /.test(e.message) &&
    typeof e.position === 'number')
}

test('stringify writes every bigint as its decimal string; parse reads the named keys back', () => {
  const order = { id: BIG, userId: MAX, ids: [1n, BIG], total: 42, note: '123' }
  const text = stringify(order)
  assert.equal(text, `{"id":"${BIG}","userId":"${MAX}","ids":["1","${BIG}"],"total":42,"note":"123"}`)
  // IDs of a layout: 2^64 - 1 is one of the 64-bit `flake`, not of the default snowflake.
  assert.deepEqual(parse(text, ['id', 'userId', 'ids'], 'flake'), order)
  parseError(() => parse(text, ['id', 'userId']), 'userId')
  assert.equal(JSON.stringify({ id: BIG }, replacer), `{"id":"${BIG}"}`)
  assert.deepEqual(JSON.parse(text, reviver((k) => k === 'id')).id, BIG)
})

// Whether this JSON.parse gives revivers the source text (Node >= 21).
let withSource = false
JSON.parse('1', (_k, v, context) => ((withSource = typeof context?.source === 'string'), v))

test('a number is taken only when exact; null stays null', () => {
  assert.deepEqual(parse('{"id": 123, "p": null}', ['id', 'p']), { id: 123n, p: null })
  if (withSource) {
    // The source text: the number read digit for digit (in arrays too), and still checked.
    assert.deepEqual(parse(`{"id": ${BIG}, "ids": [1, ${MAX}], "n": [${BIG}]}`, ['id', 'ids'], 'flake'), {
      id: BIG,
      ids: [1n, MAX],
      n: [Number(BIG)],
    })
    parseError(() => parse(`{"ids": [1, ${MAX + 1n}]}`, ['ids'], 'flake'), 'ids[1]')
    parseError(() => parse(`{"id": ${MAX + 1n}}`, ['id'], 'flake'), 'id')
    parseError(() => parse('{"id": 1e3}', ['id']), 'id')
  } else {
    parseError(() => parse(`{"id": ${BIG}}`, ['id']), 'id')
  }
})

test('text that is not an ID is an error naming the key', () => {
  for (const bad of ['"-1"', '"1e3"', '"abc"', '""', `"${MAX + 1n}"`, 'true', '{}', '1.5', '-1']) {
    parseError(() => parse(`{"orderId": ${bad}}`, ['orderId'], 'flake'), 'orderId')
  }
  // The engine's rule for decimal text: digits (a leading zero is a digit).
  assert.equal(parse('{"id": "01"}', ['id']).id, 1n)
  parseError(() => parse('{"ids": ["1", "x"]}', ['ids']), 'ids[1]')
})

test('installToJSON makes any JSON.stringify write bigints, and undoes itself', () => {
  assert.throws(() => JSON.stringify({ id: BIG }), TypeError)
  const uninstall = installToJSON()
  try {
    assert.equal(JSON.stringify({ id: BIG, ids: [MAX] }), `{"id":"${BIG}","ids":["${MAX}"]}`)
  } finally {
    uninstall()
  }
  assert.throws(() => JSON.stringify({ id: BIG }), TypeError)
})

test('parseId, the engine\'s one ID parser, on this backend', () => {
  const { parseId } = api
  assert.equal(parseId('910499571847892992'), BIG)
  assert.equal(parseId(BIG), BIG)
  assert.equal(parseId(123), 123n)
  assert.equal(parseId(Uint8Array.from([0, 0, 0, 0, 0, 0, 1, 0])), 256n)
  assert.equal(parseId(MAX, 'flake'), MAX)
  for (const [bad, position] of [['12x', 2], [MAX, 0], [2 ** 60, 0], [-1, 0], [true, 0], [new Uint8Array(3), 3]]) {
    assert.throws(() => parseId(bad), (e) => e.code === 'FLAKEID_PARSE' && e.position === position, String(bad))
  }
})
