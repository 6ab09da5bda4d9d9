// Per-call cost of nextId() in Node, below the cap: @flakeid/wasm beside the seed's
// JavaScript BigInt algorithm (seed 002, re-typed below) and nodejs-snowflake
// (also Rust -> wasm).
//
// Every generator here caps IDs per millisecond (4096; nodejs-snowflake 1024), and
// a loop that outruns the cap measures waiting, not cost. So each sample is a burst
// of BURST calls started on a fresh millisecond, BURST below every cap; the cost is
// the burst's time / BURST, and the report is the median (and p10/p90) of SAMPLES
// bursts, the implementations interleaved so that machine noise hits all alike.
// A second table shows flakeid's sustained modes (borrow, batches).
//
//   node bench/next-id.mjs            (after bash build.sh; npm install for nodejs-snowflake)
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Generator } = require('../pkg/node/index.js')
const { Snowflake: NodejsSnowflake } = require('nodejs-snowflake')

const BURST = 1000
const SAMPLES = Number(process.env.SAMPLES || 400)

// Seed 002, re-typed: Twitter's algorithm with BigInt, Date.now() per ID.
class SeedSnowflake {
  constructor(workerId, dataCenterId, sequence) {
    this.twepoch = 1288834974657n
    this.workerIdBits = 5n
    this.dataCenterIdBits = 5n
    this.maxWrokerId = -1n ^ (-1n << this.workerIdBits)
    this.maxDataCenterId = -1n ^ (-1n << this.dataCenterIdBits)
    this.sequenceBits = 12n
    this.workerIdShift = this.sequenceBits
    this.dataCenterIdShift = this.sequenceBits + this.workerIdBits
    this.timestampLeftShift = this.sequenceBits + this.workerIdBits + this.dataCenterIdBits
    this.sequenceMask = -1n ^ (-1n << this.sequenceBits)
    this.lastTimestamp = -1n
    this.workerId = BigInt(workerId)
    this.dataCenterId = BigInt(dataCenterId)
    this.sequence = BigInt(sequence)
  }
  tilNextMillis(lastTimestamp) {
    let timestamp = this.timeGen()
    while (timestamp <= lastTimestamp) timestamp = this.timeGen()
    return BigInt(timestamp)
  }
  timeGen() {
    return BigInt(Date.now())
  }
  nextId() {
    let timestamp = this.timeGen()
    if (timestamp < this.lastTimestamp) {
      throw new Error('Clock moved backwards. Refusing to generate id for ' + (this.lastTimestamp - timestamp))
    }
    if (this.lastTimestamp === timestamp) {
      this.sequence = (this.sequence + 1n) & this.sequenceMask
      if (this.sequence === 0n) timestamp = this.tilNextMillis(this.lastTimestamp)
    } else {
      this.sequence = 0n
    }
    this.lastTimestamp = timestamp
    return (
      ((timestamp - this.twepoch) << this.timestampLeftShift) |
      (this.dataCenterId << this.dataCenterIdShift) |
      (this.workerId << this.workerIdShift) |
      this.sequence
    )
  }
}

const flakeid = new Generator({ datacenter: 1, worker: 1 })
const seed = new SeedSnowflake(1, 1, 0)
const nodejsSnowflake = new NodejsSnowflake({ custom_epoch: 1288834974657, instance_id: 33 })

const contenders = [
  ['@flakeid/wasm Generator.nextId()', () => flakeid.nextId()],
  ['seed 002 JS BigInt nextId()', () => seed.nextId()],
  ['nodejs-snowflake 2.0.1 getUniqueID()', () => nodejsSnowflake.getUniqueID()],
]

const sink = new Array(BURST)
function burst(next) {
  const start = Date.now()
  while (Date.now() === start); // a fresh millisecond: the burst stays below every cap
  const t = process.hrtime.bigint()
  for (let i = 0; i < BURST; i++) sink[i] = next()
  const ns = Number(process.hrtime.bigint() - t) / BURST
  for (let i = 1; i < BURST; i++) if (!(sink[i] > sink[i - 1])) throw new Error('IDs must increase')
  return ns
}

const quantile = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]

for (const [, next] of contenders) for (let i = 0; i < 50; i++) burst(next) // warm up (JIT)
const samples = contenders.map(() => [])
for (let s = 0; s < SAMPLES; s++) contenders.forEach(([, next], i) => samples[i].push(burst(next)))

console.log(`node ${process.version}; ${SAMPLES} bursts of ${BURST} calls each, started on a fresh ms (below every cap)`)
console.log('ns per ID           median    p10    p90')
contenders.forEach(([name], i) => {
  const xs = samples[i].sort((a, b) => a - b)
  console.log(`${name.padEnd(40)} ${quantile(xs, 0.5).toFixed(1).padStart(6)} ${quantile(xs, 0.1).toFixed(1).padStart(6)} ${quantile(xs, 0.9).toFixed(1).padStart(6)}`)
})

// Sustained: a borrowing generator never waits (within maxBorrowMs), batches
// reserve a tick at a time.
function sustained(label, n, fn) {
  const runs = []
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint()
    fn()
    runs.push(Number(process.hrtime.bigint() - t) / n)
    const until = Date.now() + 250 // let the borrow window drain
    while (Date.now() < until);
  }
  runs.sort((a, b) => a - b)
  console.log(`${label.padEnd(40)} ${quantile(runs, 0.5).toFixed(1).padStart(6)} ns per ID (median of 7 runs)`)
}
const borrow = new Generator({ node: 2, overflow: 'borrow' })
const N = 200_000
const big = new Array(1024)
sustained(`flakeid nextId() x ${N}, overflow "borrow"`, N, () => {
  for (let i = 0; i < N; i++) big[i & 1023] = borrow.nextId()
})
const batch = new Generator({ node: 3, overflow: 'borrow' })
sustained(`flakeid nextIds(4096) x 50, "borrow"`, 4096 * 50, () => {
  for (let i = 0; i < 50; i++) batch.nextIds(4096)
})
