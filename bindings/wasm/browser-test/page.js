// Loads the web build, issues 100,000 IDs and decodes one. The page only reports
// what it saw; browser.test.mjs (in Node) checks it.
import init, { Generator, Layout, UuidGenerator, decompose, encode, decode, uuid7TimestampMs, version } from '/pkg/web/flakeid.js'

const N = 100_000
const out = document.getElementById('result')

async function run() {
  await init()
  const startMs = Date.now()
  const gen = new Generator({ datacenter: 3, worker: 7 })
  const ids = new Array(N)
  for (let i = 0; i < N; i++) ids[i] = gen.nextId()
  const batch = gen.nextIds(1000)
  const endMs = Date.now()
  const one = ids[N >> 1]
  const parts = decompose(one)
  const bytes = gen.nextBuffer()
  // The 128-bit family: its random bits from the page's crypto.getRandomValues.
  const uuids = new UuidGenerator()
  const uuidStartMs = Date.now()
  const uuid7s = Array.from({ length: 10_000 }, () => uuids.uuid7())
  const uuidEndMs = Date.now()
  return {
    uuid7s,
    uuidStartMs,
    uuidEndMs,
    uuidTimes: [uuid7TimestampMs(uuid7s[0]), uuid7TimestampMs(uuid7s.at(-1))],
    version: version(),
    userAgent: navigator.userAgent,
    startMs,
    endMs,
    ids: ids.map(String),
    idType: typeof ids[0],
    batchType: Object.prototype.toString.call(batch),
    batch: [...batch].map(String),
    decoded: { id: String(one), ...parts, date: parts.date.toISOString() },
    base62: encode(one, 'base62'),
    base62Back: String(decode(encode(one, 'base62'), 'base62')),
    bytesType: Object.prototype.toString.call(bytes),
    bytesLength: bytes.length,
    layout: String(Layout.preset('snowflake')),
    hasBuffer: typeof globalThis.Buffer !== 'undefined',
  }
}

window.__flakeid = run().then(
  (r) => {
    out.textContent = `ok: ${r.ids.length} IDs, first ${r.ids[0]}, decoded ${JSON.stringify(r.decoded)}`
    return r
  },
  (e) => {
    out.textContent = `error: ${e && e.stack ? e.stack : e}`
    return { error: String(e && e.stack ? e.stack : e), code: e && e.code }
  },
)
