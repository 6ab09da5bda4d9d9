// One generator per process for the ORM helpers (./drizzle, ./kysely): configure()'s or, when
// the application never calls it, the FLAKEID_* variables' (the engine's list: optionsFromEnv),
// with no node id a free one on this host (the engine's default). Configuring again with other options
// is refused. `lease: 'database'` with the app's pg Pool (configure's `database`): the engine
// turns the pool's settings into its lease URL. In a `cluster` worker the generator is built
// as the worker starts (buildAtStart). Names, values and errors are the engine's.
'use strict'

const cluster = require('node:cluster')
const binding = require('../loader.js')

/** The process's generator, built by the first configure() (or first use). */
let shared = null
/** The options it was built with, as describe() writes them. */
let sharedOptions = null

/** `options` as text, to compare by value: keys sorted, bigints as `123n` (JSON has none). */
function describe(options) {
  const sorted = Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)))
  return JSON.stringify(sorted, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value))
}

/**
 * The connection settings of `database` (a pg Pool or Client, a Drizzle database over
 * one, a pg config object or a connection string), by the names the engine reads for
 * `lease: 'database'`. pg keeps the password out of its objects' enumerable keys, so
 * each setting is read by name.
 */
function connectionOf(database) {
  if (typeof database === 'string') return { url: database }
  const db = (database && database.$client) || database || {}
  const o = db.options || db.connectionParameters || db
  // pg's `ssl`: true, or TLS options (verified unless rejectUnauthorized is false).
  const tls = o.ssl !== null && typeof o.ssl === 'object' ? { ssl: o.ssl.rejectUnauthorized !== false } : { ssl: o.ssl }
  if (tls.ssl === false && typeof o.ssl === 'object') Object.assign(tls, { ssl: undefined, sslmode: 'require' })
  return { url: o.connectionString, host: o.host, port: o.port, user: o.user, password: o.password, database: o.database, ...tls }
}

/**
 * The process's generator from `options` (those of `new Generator`); again only with
 * equal ones. `database` is the app's own PostgreSQL for `lease: 'database'`.
 */
function configure(options = {}, { database } = {}) {
  if (database !== undefined && typeof options.lease === 'string') {
    options = { ...options, lease: binding.databaseLease(options.lease, connectionOf(database)) }
  }
  const given = describe(options)
  if (atStart !== null) {
    // buildAtStart's, from the environment, no ID made yet: kept when these are its
    // options, else closed, and this configure() (after an await in the worker's start)
    // decides instead.
    const started = atStart
    atStart = null
    if (started.options === given) [shared, sharedOptions] = [started.generator, given]
    else started.generator.close()
  }
  if (shared === null) {
    shared = new binding.Generator(options)
    sharedOptions = given
  } else if (given !== sharedOptions) {
    binding.configuredTwice(sharedOptions, given) // throws the engine's error
  }
  return shared
}

/** The process's generator: configure()'s, or one from the environment on first use. */
function sharedGenerator() {
  return shared ?? configure(settingsFromEnv())
}

/**
 * Called by the adapters as they are set up (a Drizzle column, the Kysely plugin). In a
 * `cluster` worker the process's generator is built once the worker's synchronous start-up
 * code has run (configure()'s, else the environment's), in a nextTick: before the worker's
 * listen() asks the primary for the socket (itself a nextTick). A node id the engine
 * refuses (a fixed one held by another worker on this host) then throws there, uncaught,
 * so the worker exits before it listens and the primary sees its 'exit', instead of
 * failing every insert.
 * Elsewhere (a single process, a script, drizzle-kit, a test runner) it is built on first
 * use.
 */
function buildAtStart() {
  if (!cluster.isWorker || startScheduled) return
  startScheduled = true
  process.nextTick(() => {
    if (shared !== null) return
    const generator = configure(settingsFromEnv())
    atStart = { generator, options: sharedOptions }
    shared = null
    sharedOptions = null
  })
}
let startScheduled = false
/**
 * buildAtStart's generator and its options, until the first ID or configure() adopts it:
 * a configure() with other options (one that came after an await in the worker's start)
 * replaces it rather than being refused as configured twice.
 */
let atStart = null

/** The `new Generator` options the FLAKEID_* variables give; unset ones are left out. */
function settingsFromEnv(env = process.env) {
  return binding.optionsFromEnv(env)
}

/** Forgets the shared generator (releasing its lease): tests, and a clean shutdown. */
function reset() {
  if (shared !== null && typeof shared.releaseLease === 'function') {
    shared.releaseLease()
  }
  shared = null
  sharedOptions = null
  if (atStart !== null) atStart.generator.close()
  atStart = null
}

module.exports = {
  buildAtStart,
  configure,
  sharedGenerator,
  settingsFromEnv,
  settingsOptions: binding.settingsOptions,
  reset,
}
