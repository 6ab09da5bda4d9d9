// Call order across worker threads: the process-wide uuid7() is one native
// generator shared by every thread of the process, and a call that starts after
// another returned gets the larger UUID (docs/design.md, "Many threads on one
// generator: call order"). Native addon only: each wasm instance is a thread's own.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { BACKEND } from './backend.mjs'

test('uuid7() from 4 worker threads keeps call order', { skip: BACKEND === 'wasm' && 'a wasm instance per thread' }, async () => {
  const shared = new SharedArrayBuffer(8)
  const url = new URL('./fixtures/order-worker.mjs', import.meta.url)
  const bad = await Promise.all(Array.from({ length: 4 }, () => new Promise((resolve, reject) => {
    const w = new Worker(url, { workerData: { shared, calls: 100_000 } })
    w.on('message', resolve)
    w.on('error', reject)
  })))
  assert.deepEqual(bad, [0, 0, 0, 0], 'calls whose UUID was not above one returned before they began')
})
