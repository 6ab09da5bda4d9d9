// The one door through which every test reaches flakeid, so that the same suite
// runs against both builds of the engine:
//   FLAKEID_BACKEND=native (default)  ../index.js, the napi-rs addon
//   FLAKEID_BACKEND=wasm              ../../bindings/wasm/pkg/node/index.js, the
//                                     wasm-bindgen Node build (bindings/wasm/build.sh)
// and against the packages as users install them (make test-dist):
//   FLAKEID_FROM=package              require('@flakeid/node') from this folder's
//                                     node_modules; FLAKEID_BACKEND says which engine
//                                     its loader must have picked (wasm: the fallback
//                                     when no native package is installed).
// A run without the build it asks for fails here, loudly: it never skips.
import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

// The suite's files run side by side, each in a process of its own, and many of
// their tests build on node 0: with the host guard each process would be refused
// the node id another holds. Off, those of one process still share its counter,
// and a generator without a node id is refused (nothing keeps processes apart).
// guard.test.mjs (its own process) turns it back on and tests it; the variable is
// the process's own environment, which the engine reads when a generator is built.
process.env.FLAKEID_HOST_GUARD = 'off'

export const BACKEND = process.env.FLAKEID_BACKEND || 'native'
/** True when the suite runs against the installed npm packages (make test-dist). */
export const FROM_PACKAGE = process.env.FLAKEID_FROM === 'package'
if (!['native', 'wasm'].includes(BACKEND)) {
  throw new Error(`FLAKEID_BACKEND must be "native" or "wasm", got ${JSON.stringify(BACKEND)}`)
}

function load() {
  if (FROM_PACKAGE) {
    const api = require('@flakeid/node')
    const wasm = require('@flakeid/wasm')
    const picked = api === wasm ? 'wasm' : 'native'
    if (picked !== BACKEND) {
      throw new Error(`the installed @flakeid/node loaded the ${picked} engine, but FLAKEID_BACKEND=${BACKEND}`)
    }
    return api
  }
  const paths = {
    native: fileURLToPath(new URL('../index.js', import.meta.url)),
    wasm: fileURLToPath(new URL('../../bindings/wasm/pkg/node/index.js', import.meta.url)),
  }
  const path = paths[BACKEND]
  if (!existsSync(path)) {
    throw new Error(
      `FLAKEID_BACKEND=${BACKEND}: ${path} does not exist; build it first ` +
        (BACKEND === 'wasm' ? '(bash bindings/wasm/build.sh)' : '(npm install in node/)'),
    )
  }
  return require(path)
}

/** The @flakeid/node package folder under test: node/ or the installed one. */
export const pkgDir = FROM_PACKAGE
  ? dirname(require.resolve('@flakeid/node/package.json'))
  : fileURLToPath(new URL('..', import.meta.url))

export const api = load()
export const {
  Generator,
  Layout,
  ManualClock,
  Sealer,
  decompose,
  compose,
  idRange,
  encode,
  decode,
  toBytes,
  fromBytes,
  errorCodes,
  optionsFromEnv,
  settingsOptions,
  configuredTwice,
  version,
  // The 128-bit family.
  UuidGenerator,
  uuid7,
  ulid,
  typeid,
  composeUuid7,
  parseUuid,
  parseUlid,
  parseTypeId,
  formatUuid,
  formatUlid,
  formatTypeId,
  uuidToUlid,
  ulidToUuid,
  uuid7TimestampMs,
  uuidVersion,
  uuid7Range,
} = api

export const isNative = BACKEND === 'native'
/** `skip` option for tests of what only the native addon has (Buffer, threads, the flake-idgen drop-in). */
export const nativeOnly = isNative ? false : `native-only (FLAKEID_BACKEND=${BACKEND})`

/** A vector layout spec (preset name or snake_case object) as a `Layout`. */
export function layoutOf(spec) {
  if (typeof spec === 'string') return Layout.preset(spec)
  return new Layout({
    timeBits: spec.time_bits,
    datacenterBits: spec.datacenter_bits,
    workerBits: spec.worker_bits,
    sequenceBits: spec.sequence_bits,
    tickMs: spec.tick_ms,
    epochMs: spec.epoch_ms,
    order: spec.order,
  })
}

/** Vector options (snake_case) as `new Generator` options (camelCase). */
export function optionsOf(options) {
  const out = {}
  for (const [k, v] of Object.entries(options)) out[k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())] = v
  return out
}

/** The `err.code` for a vector's error kind (`clock_backwards` -> `FLAKEID_CLOCK_BACKWARDS`). */
export const codeOf = (kind) => `FLAKEID_${kind.toUpperCase()}`

/** Runs `fn`, which must throw a flakeid error of `kind`; returns the error. */
export function expectError(fn, kind, extra = {}) {
  let err
  try {
    fn()
  } catch (e) {
    err = e
  }
  if (!err) throw new Error(`expected a ${codeOf(kind)} error, but nothing was thrown`)
  if (!(err instanceof Error)) throw new Error(`expected an Error, got ${typeof err}: ${err}`)
  if (err.code !== codeOf(kind)) throw new Error(`expected code ${codeOf(kind)}, got ${err.code}: ${err.message}`)
  for (const [k, v] of Object.entries(extra)) {
    if (err[k] !== v) throw new Error(`expected err.${k} === ${JSON.stringify(v)}, got ${JSON.stringify(err[k])}: ${err.message}`)
  }
  return err
}

/** The shared vectors: tests/vectors, or FLAKEID_VECTORS (make test-dist copies the suite). */
const VECTORS = process.env.FLAKEID_VECTORS || fileURLToPath(new URL('../../tests/vectors', import.meta.url))

export function loadVectors(name) {
  return require(`${VECTORS}/${name}.json`)
}

/** The names of every vector file (`seal` for seal.json) in `dir` (the top level, or `js`), for the every-file check. */
export function vectorFiles(dir = '.') {
  return readdirSync(`${VECTORS}/${dir}`)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort()
}
