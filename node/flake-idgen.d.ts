/// <reference types="node" />
import type { ManualClock } from './index'

declare namespace FlakeId {
  interface Options {
    /** Generator id, 0..=1023 (instead of `datacenter` + `worker`). */
    id?: number
    /** 0..=31. */
    datacenter?: number
    /** 0..=31. */
    worker?: number
    /** Unix ms (or a Date) subtracted from the time; default 0. */
    epoch?: number | Date
    /** At most `seqMask + 1` IDs per ms; `2^k - 1`, default 0xFFF. */
    seqMask?: number
    /** flakeid extension: a ManualClock for deterministic tests. */
    clock?: ManualClock
  }
}

/** flake-idgen 1.x drop-in: `require('@flakeid/node/flake-idgen')`. */
declare class FlakeId {
  constructor(options?: FlakeId.Options)
  readonly options: FlakeId.Options
  /** The 10-bit generator id. */
  readonly id: number
  /** `id << 12`, as flake-idgen keeps it. */
  readonly genId: number
  /** Set only when `id` was not given. */
  readonly datacenter?: number
  /** Set only when `id` was not given. */
  readonly worker?: number
  readonly epoch: number
  readonly seqMask: number
  /** An 8-byte big-endian ID; throws when this ms's sequence is used up or the clock moved back. */
  next(): Buffer
  /** Calls back asynchronously, waiting across a used-up sequence; errors (clock rollback) go to `cb`. */
  next(cb: (err: Error | null, id?: Buffer) => void): void
  static readonly POW10: number
  static readonly POW26: number
}

export = FlakeId
