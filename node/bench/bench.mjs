// One table, one run: flakeid's Node API beside the usual Node ID generators.
//   node bench/bench.mjs            (npm run bench; make bench-node)
// Each row is the median of ROUNDS timed rounds of ~ROUND_MS each, after a warm-up.
// "cap" rows issue in strict mode, where 12 sequence bits at 1 ms allow at most
// 4,096,000 IDs/s; "below the cap" measures the same strict path on a layout whose
// sequence never runs out (22 bits), i.e. the per-call cost itself.
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { Snowflake } from '@sapphire/snowflake'
import { v7 as uuidv7 } from 'uuid'

const require = createRequire(import.meta.url)
const { Generator, Layout, UuidGenerator, uuid7 } = require('../index.js')
const FlakeIdDropIn = require('../flake-idgen.js')
const FlakeIdgen = require('flake-idgen')

const ROUNDS = Number(process.env.BENCH_ROUNDS || 7)
const ROUND_MS = Number(process.env.BENCH_ROUND_MS || 400)
const CAP = 4_096_000

/** Median ops/s of `fn(batch)`, which performs `batch` operations and returns how many succeeded. */
function measure(fn, batch = 10_000) {
  const rates = []
  const deadline = (ms) => process.hrtime.bigint() + BigInt(ms * 1e6)
  for (let round = -1; round < ROUNDS; round++) {
    const ms = round < 0 ? ROUND_MS / 2 : ROUND_MS
    const end = deadline(ms)
    const t0 = process.hrtime.bigint()
    let ok = 0
    let now = t0
    while (now < end) {
      ok += fn(batch)
      now = process.hrtime.bigint()
    }
    if (round >= 0) rates.push(ok / (Number(now - t0) / 1e9))
  }
  rates.sort((a, b) => a - b)
  return rates[rates.length >> 1]
}

/** `batch` calls of `f`, counting those that did not throw (flake-idgen throws on overflow). */
const calls = (f) => (batch) => {
  let ok = 0
  for (let i = 0; i < batch; i++) {
    try {
      f()
      ok++
    } catch {
      // a refused call is not counted
    }
  }
  return ok
}
const plain = (f) => (batch) => {
  for (let i = 0; i < batch; i++) f()
  return batch
}

const strict = new Generator({ worker: 1 })
const uncapped = new Generator({
  layout: new Layout({ timeBits: 41, nodeBits: 0, sequenceBits: 22, epochMs: 1_600_000_000_000 }),
})
const borrow = new Generator({ worker: 2, overflow: 'borrow', maxBorrowMs: 86_400_000 })
const batcher = new Generator({ worker: 3, overflow: 'borrow', maxBorrowMs: 86_400_000 })
const dropIn = new FlakeIdDropIn({ worker: 4 })
const original = new FlakeIdgen({ worker: 5 })
const sapphire = new Snowflake(1_420_070_400_000n)
const uuids = new UuidGenerator()

const rows = [
  ['flakeid nextId() strict (cap 4.096M/s)', calls(() => strict.nextId()), '>= 97% of cap'],
  ['flakeid nextId() strict, below the cap', plain(() => uncapped.nextId()), '<= 40 ns/call'],
  ['flakeid nextId() borrow', plain(() => borrow.nextId()), '>= 20M/s'],
  ['flakeid nextIds(1e6) borrow (per ID)', (batch) => batcher.nextIds(batch).length, '>= 300M IDs/s', 1_000_000],
  ['flakeid nextBuffer() borrow', plain(() => borrow.nextBuffer()), ''],
  ['flakeid/flake-idgen drop-in next()', calls(() => dropIn.next()), '>= flake-idgen'],
  ['flake-idgen 1.4 next()', calls(() => original.next()), ''],
  ['@sapphire/snowflake generate()', plain(() => sapphire.generate()), ''],
  ['flakeid UuidGenerator uuid7() (text)', plain(() => uuids.uuid7()), '>= 3x uuid v7()'],
  ['flakeid uuid7() (shared generator, text)', plain(() => uuid7()), '>= 3x uuid v7()'],
  ['flakeid UuidGenerator uuid7s(1000) (per ID)', (batch) => uuids.uuid7s(batch).length, '<= uuid7() per ID', 1000],
  ['flakeid UuidGenerator uuid7Bytes()', plain(() => uuids.uuid7Bytes()), ''],
  ['uuid v7()', plain(() => uuidv7()), ''],
  ['crypto.randomUUID()', plain(() => randomUUID()), ''],
]

const fmt = (n, w) => String(n).padStart(w)
console.log(`node ${process.version}, ${ROUNDS} rounds x ${ROUND_MS} ms, median`)
console.log(`| ${'what'.padEnd(42)} | ${'M/s'.padStart(8)} | ${'ns/op'.padStart(7)} | ${'% of cap'.padStart(8)} | target |`)
console.log(`|${'-'.repeat(44)}|${'-'.repeat(10)}|${'-'.repeat(9)}|${'-'.repeat(10)}|--------|`)
for (const [name, fn, target, batch] of rows) {
  const rate = measure(fn, batch)
  const capPct = name.includes('cap 4.096') || name.includes('flake-idgen') ? `${((rate / CAP) * 100).toFixed(1)}%` : ''
  console.log(
    `| ${name.padEnd(42)} | ${fmt((rate / 1e6).toFixed(2), 8)} | ${fmt((1e9 / rate).toFixed(1), 7)} | ${fmt(capPct, 8)} | ${target} |`,
  )
}
