// A real browser: headless Chromium loads page.js from a server on 127.0.0.1,
// which imports the web build (pkg/web), issues 100,000 IDs and decodes one. The
// result is read over the DevTools protocol and checked here: unique, strictly
// increasing, and the decoded fields are the generator's.
//
// Needs the web build (bash bindings/wasm/build.sh) and /usr/bin/chromium
// (make setup-browser installs it). Node 20 needs --experimental-websocket.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { extname, join, normalize } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url)) // bindings/wasm/
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'
const N = 100_000
const TIMEOUT_MS = 60_000
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' }

let server
let browser
let profile
let result

/** Serves browser-test/ and pkg/web/ only. */
function serve() {
  return new Promise((resolve) => {
    const s = createServer((req, res) => {
      const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '')
      const file = join(ROOT, path)
      if (!/^(browser-test|pkg\/web)\//.test(path) || !existsSync(file)) {
        res.writeHead(404).end('not found')
        return
      }
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' })
      res.end(readFileSync(file))
    })
    s.listen(0, '127.0.0.1', () => resolve(s))
  })
}

/** Starts Chromium with a fresh profile; resolves with its DevTools port. */
async function launch() {
  profile = mkdtempSync(join(tmpdir(), 'flakeid-chromium-'))
  browser = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-breakpad',
      '--disable-crash-reporter',
      `--user-data-dir=${profile}`,
      '--remote-debugging-port=0',
      'about:blank',
    ],
    // Its own process group: Chromium's helper processes (renderer, utilities) live
    // on after the main one exits and keep writing to the profile, so cleanup ends
    // and waits for the whole group before removing it.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  )
  let stderr = ''
  browser.stderr.on('data', (d) => (stderr += d))
  const portFile = join(profile, 'DevToolsActivePort')
  const deadline = Date.now() + TIMEOUT_MS
  while (!existsSync(portFile) || readFileSync(portFile, 'utf8').split('\n').length < 2) {
    if (browser.exitCode !== null) throw new Error(`chromium exited (${browser.exitCode}): ${stderr}`)
    if (Date.now() > deadline) throw new Error(`chromium did not start: ${stderr}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return Number(readFileSync(portFile, 'utf8').split('\n')[0])
}

/** A minimal DevTools-protocol client over the page target's WebSocket. */
async function connect(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()
  const page = targets.find((t) => t.type === 'page')
  assert.ok(page, 'chromium has a page target')
  const ws = new WebSocket(page.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = () => reject(new Error('cannot connect to the DevTools WebSocket'))
  })
  let next = 0
  const pending = new Map()
  const errors = []
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data)
    if (msg.id !== undefined && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id)
      pending.delete(msg.id)
      if (msg.error) reject(new Error(`${msg.error.message} ${msg.error.data ?? ''}`))
      else resolve(msg.result)
    } else if (msg.method === 'Runtime.exceptionThrown') {
      errors.push(msg.params.exceptionDetails)
    }
  }
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next
      pending.set(id, { resolve, reject })
      ws.send(JSON.stringify({ id, method, params }))
    })
  return { send, errors, close: () => ws.close() }
}

before(async () => {
  assert.ok(existsSync(join(ROOT, 'pkg/web/flakeid.js')), 'the web build exists (bash bindings/wasm/build.sh)')
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} exists (make setup-browser installs it)`)
  assert.equal(typeof WebSocket, 'function', 'WebSocket (node --experimental-websocket on Node 20)')
  server = await serve()
  const cdp = await connect(await launch())
  try {
    await cdp.send('Runtime.enable')
    await cdp.send('Page.enable')
    await cdp.send('Page.navigate', { url: `http://127.0.0.1:${server.address().port}/browser-test/index.html` })
    const deadline = Date.now() + TIMEOUT_MS
    for (;;) {
      const probe = await cdp.send('Runtime.evaluate', { expression: 'typeof window.__flakeid' })
      if (probe.result.value === 'object') break
      if (cdp.errors.length) throw new Error(`page error: ${JSON.stringify(cdp.errors[0])}`)
      if (Date.now() > deadline) throw new Error('the page never started (module failed to load?)')
      await new Promise((r) => setTimeout(r, 50))
    }
    const r = await cdp.send('Runtime.evaluate', {
      expression: 'window.__flakeid',
      awaitPromise: true,
      returnByValue: true,
      timeout: TIMEOUT_MS,
    })
    if (r.exceptionDetails) throw new Error(`page threw: ${JSON.stringify(r.exceptionDetails)}`)
    result = r.result.value
    const shot = await cdp.send('Page.captureScreenshot', { format: 'png' })
    assert.ok(shot.data.length > 100, 'a screenshot was taken')
  } finally {
    cdp.close()
  }
})

/** Whether any process of the group is left (signal 0 only checks). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

after(async () => {
  if (browser?.pid) {
    const pgid = browser.pid
    try {
      process.kill(-pgid, 'SIGTERM')
    } catch {
      // the group has exited already
    }
    const start = Date.now()
    while (groupAlive(pgid)) {
      if (Date.now() - start > 5000) {
        try {
          process.kill(-pgid, 'SIGKILL')
        } catch {
          // the group has exited meanwhile
        }
      }
      if (Date.now() - start > 15000) throw new Error(`chromium's processes (group ${pgid}) did not exit`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  if (server) server.close()
  if (profile) rmSync(profile, { recursive: true, force: true })
})

test('the page ran in Chromium without an error', () => {
  assert.equal(result.error, undefined, result.error)
  assert.match(result.userAgent, /Chrome/)
  assert.equal(result.hasBuffer, false, 'a browser has no Buffer')
  assert.match(result.version, /^\d+\.\d+\.\d+/)
})

test('100,000 IDs: bigint, unique, strictly increasing', () => {
  assert.equal(result.idType, 'bigint')
  const ids = result.ids.map(BigInt)
  assert.equal(ids.length, N)
  assert.equal(new Set(result.ids).size, N, 'unique')
  for (let i = 1; i < N; i++) assert.ok(ids[i] > ids[i - 1], `increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`)
  assert.equal(result.batchType, '[object BigUint64Array]')
  const batch = result.batch.map(BigInt)
  assert.equal(batch.length, 1000)
  assert.ok(batch[0] > ids[N - 1], 'the batch follows the single IDs')
  for (let i = 1; i < batch.length; i++) assert.ok(batch[i] > batch[i - 1])
})

test('UUIDv7s in the page: increasing, of the page time, random bits from the page', () => {
  const u = result.uuid7s
  assert.equal(u.length, 10_000)
  assert.ok(u.every((x) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(x)))
  for (let i = 1; i < u.length; i++) assert.ok(u[i] > u[i - 1], `increasing at ${i}`)
  // The clock is js/clock.js's per-task hint: it may lag by the task's duration
  // (the page's one task began at startMs), never lead (the borrow window aside:
  // 10,000 IDs stay within one millisecond's 65,536).
  assert.ok(result.uuidTimes[0] >= result.startMs && result.uuidTimes[1] <= result.uuidEndMs,
    `${result.uuidTimes} in [${result.startMs}, ${result.uuidEndMs}]`)
  assert.equal(new Set(u.map((x) => x.slice(24))).size, u.length, 'the random bits repeat')
})

test('the decoded ID has the generator fields and the page time', () => {
  const d = result.decoded
  assert.equal(d.datacenter, 3)
  assert.equal(d.worker, 7)
  assert.equal(d.node, (3 << 5) | 7)
  assert.ok(d.sequence >= 0 && d.sequence <= 4095)
  assert.ok(d.timestampMs >= result.startMs && d.timestampMs <= result.endMs, `${d.timestampMs} in [${result.startMs}, ${result.endMs}]`)
  assert.equal(d.date, new Date(d.timestampMs).toISOString())
  // The same bits taken apart here, by plain arithmetic.
  const id = BigInt(d.id)
  assert.equal(Number(id >> 22n) + 1288834974657, d.timestampMs)
  assert.equal(Number((id >> 12n) & 1023n), d.node)
  assert.equal(Number(id & 4095n), d.sequence)
  assert.equal(result.base62.length, 11)
  assert.equal(result.base62Back, d.id)
  assert.equal(result.bytesType, '[object Uint8Array]')
  assert.equal(result.bytesLength, 8)
  assert.match(result.layout, /^snowflake \(41 time/)
})
