'use strict'
// Drop-in replacement for flake-idgen 1.x, on the flakeid engine:
//   const FlakeId = require('@flakeid/node/flake-idgen')   // was require('flake-idgen')
// Same options, same properties, same 8-byte Buffer (42-bit ms since `epoch`,
// 10-bit id, 12-bit sequence), same throws. Differences, all on purpose:
// - Out-of-range options (id > 1023, datacenter/worker > 31, negative or
//   fractional numbers, an epoch in the future, a seqMask that is not 2^k - 1)
//   throw a RangeError (code FLAKEID_CONFIG); flake-idgen silently masks them.
// - next(cb) passes a clock-rollback error to cb (flake-idgen 1.4 crashes there
//   with a ReferenceError); sync next() throws it with code FLAKEID_CLOCK_BACKWARDS.
// - Extension: `clock` (a ManualClock) for deterministic tests.
const { Generator, Layout } = require('./loader.js')

const OVERFLOW = 'Sequence exceeded its maximum value. Provide callback function to handle sequence overflow'

// Pooled 8-byte Buffers: several times cheaper than a native Buffer per ID.
function toBuffer(id) {
  const buf = Buffer.allocUnsafe(8)
  buf.writeBigUInt64BE(id)
  return buf
}

function rangeError(e) {
  if (!e || e.code !== 'FLAKEID_CONFIG') return e
  const r = new RangeError(e.message)
  r.code = e.code
  r.field = e.field
  return r
}

class FlakeId {
  #gen

  constructor(options) {
    this.options = options || {}
    const o = this.options
    const byId = typeof o.id !== 'undefined'
    this.epoch = +o.epoch || 0
    this.seqMask = o.seqMask || 0xfff
    try {
      const layout = this.epoch === 0
        ? 'flake'
        : new Layout({ timeBits: 42, datacenterBits: 5, workerBits: 5, sequenceBits: 12, epochMs: this.epoch })
      this.#gen = new Generator({
        layout,
        ...(byId ? { node: o.id } : { datacenter: o.datacenter || 0, worker: o.worker || 0 }),
        maxSequence: this.seqMask,
        ...(o.clock ? { clock: o.clock } : {}),
      })
    } catch (e) {
      throw rangeError(e)
    }
    // The properties flake-idgen 1.4 sets: `datacenter`/`worker` only without `id`.
    if (!byId) {
      this.datacenter = this.#gen.datacenter
      this.worker = this.#gen.worker
    }
    this.id = this.#gen.node
    this.genId = this.id << 12
  }

  next(cb) {
    if (!cb) {
      const id = this.#gen.tryNextId()
      if (id === null) throw new Error(OVERFLOW)
      return toBuffer(id)
    }
    let id
    try {
      id = this.#gen.tryNextId()
    } catch (e) {
      process.nextTick(cb, e)
      return
    }
    if (id === null) {
      // Sequence used up in this millisecond: try again in the next one.
      setTimeout(() => this.next(cb), 1)
      return
    }
    process.nextTick(cb, null, toBuffer(id))
  }
}

FlakeId.POW10 = 2 ** 10
FlakeId.POW26 = 2 ** 26

module.exports = FlakeId
