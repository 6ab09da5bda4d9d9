// The fault suite's in-process Node generator (docs/faults.md).
//
//   node node_driver.mjs --url URL --dir DIR --tag TAG [--ttl-ms N] [--rate R] [--seed S]
//
// Builds a leased @flakeid/node Generator, asks it for IDs — runs of nextId() and
// nextIds(n) batches, paced to R IDs/s — and records every ID it is given in the
// format the Rust driver documents (tests/faults/driver/src/main.rs): DIR/TAG-K.ids
// per incarnation K, events in DIR/TAG.events.jsonl, times on CLOCK_MONOTONIC
// (process.hrtime, which libuv reads from CLOCK_MONOTONIC).
//
// The Node binding has no leaseState(): a lease taken over is recognised by its
// refusal's message ("taken over by another holder"), the core's LeaseState::Lost.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
for (const need of ['url', 'dir', 'tag']) {
  if (!args[need]) {
    console.error(`node_driver: --${need} is required`);
    process.exit(64);
  }
}
const { Generator } = require(args.package || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../node'));
const ttlMs = Number(args['ttl-ms'] || 2000);
const rate = Number(args.rate || 12000);
const maxBatch = Number(args['max-batch'] || 2000);

// xorshift32: the op mix is reproducible from the seed.
let state = (Number(args.seed || 1) >>> 0) || 1;
function below(n) {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state % n;
}
function batchSize() {
  const bits = Math.floor(Math.log2(maxBatch)) + 1;
  return Math.min(1 + below(2 ** (1 + below(bits))), maxBatch);
}

let stop = false;
process.on('SIGTERM', () => { stop = true; });
process.on('SIGINT', () => { stop = true; });

const mono = () => process.hrtime.bigint();
const eventsFd = fs.openSync(path.join(args.dir, `${args.tag}.events.jsonl`), 'a');
function log(ev, fields = {}) {
  const line = JSON.stringify({ t: 0, ev, ...fields }).replace('"t":0', `"t":${mono()}`);
  fs.writeSync(eventsFd, line + '\n'); // one write per line: whole even if killed
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class Ids {
  constructor(file) {
    this.fd = fs.openSync(file, 'w');
    this.parts = [];
    this.size = 0;
    this.flushed = mono();
  }
  record(t0, t1, op, ids) {
    const head = Buffer.alloc(24);
    head.writeBigUInt64LE(t0, 0);
    head.writeBigUInt64LE(t1, 8);
    head.writeUInt32LE(ids.length, 16);
    head.writeUInt32LE(op, 20);
    // A copy: the singles' array is reused by the next call, before this is flushed.
    this.parts.push(head, Buffer.from(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength)));
    this.size += 24 + ids.byteLength;
    if (this.size > 1 << 16 || t1 - this.flushed > 50_000_000n) this.flush(t1);
  }
  flush(now) {
    if (this.parts.length) fs.writeSync(this.fd, Buffer.concat(this.parts));
    this.parts = [];
    this.size = 0;
    this.flushed = now;
  }
  close() {
    this.flush(mono());
    fs.closeSync(this.fd);
  }
}

const isLost = (e) => e.code === 'FLAKEID_LEASE' && /taken over by another holder/.test(e.message);

// Issues until SIGTERM (false) or until the lease is lost (true).
async function issue(g, ids) {
  const burst = rate * 0.05;
  let budget = 0;
  let last = mono();
  let failing = null; // [kind, count]
  const singleBuf = new BigUint64Array(32);
  while (!stop) {
    const now = mono();
    budget = Math.min(budget + (Number(now - last) * rate) / 1e9, burst);
    last = now;
    if (budget < 0) {
      await sleep(Math.min(Math.max((-budget / rate) * 1000, 1), 20));
      continue;
    }
    const singles = below(10) < 3;
    const n = singles ? 1 + below(32) : batchSize();
    let got = null;
    let error = null;
    const t0 = mono();
    if (singles) {
      let k = 0;
      try {
        for (; k < n; k++) singleBuf[k] = g.nextId();
      } catch (e) {
        error = e;
      }
      got = singleBuf.subarray(0, k);
    } else {
      try {
        got = g.nextIds(n);
      } catch (e) {
        error = e;
      }
    }
    const t1 = mono();
    if (got && got.length) {
      ids.record(t0, t1, singles ? 1 : 2, got);
      budget -= got.length;
    }
    if (!error) {
      if (failing) {
        log('resumed', { kind: failing[0], errors: failing[1] });
        failing = null;
      }
      // Let signals and timers in now and then.
      if (below(64) === 0) await sleep(0);
      continue;
    }
    const kind = error.code || error.name;
    if (failing && failing[0] === kind) failing[1] += 1;
    else {
      log('refused', { kind, msg: error.message });
      failing = [kind, 1];
    }
    if (isLost(error)) return true;
    await sleep(2);
  }
  return false;
}

log('start', { pid: process.pid, kind: 'node' });
let inc = 0;
while (!stop) {
  log('build', { inc });
  let g;
  try {
    g = new Generator({ lease: args.url, leaseTtlMs: ttlMs });
  } catch (e) {
    log('build_failed', { inc, kind: e.code || e.name, msg: e.message });
    await sleep(250);
    continue;
  }
  log('acquired', { inc, node: g.node });
  const ids = new Ids(path.join(args.dir, `${args.tag}-${inc}.ids`));
  const lost = await issue(g, ids);
  ids.close();
  if (lost) log('lost', { inc });
  log('releasing', { inc }); // before: the store may forget the lease from now on
  g.releaseLease();
  log('dropped', { inc });
  inc += 1;
}
log('exit');
process.exit(0);
