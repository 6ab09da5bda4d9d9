// One generator per process for the ORM helpers (./drizzle, ./kysely): configure()'s or, when
// the application never calls it, the FLAKEID_* variables' (the engine's list: optionsFromEnv),
// with no node id a free one on this host (the engine's default). Configuring again with other options
// is refused. Names, values and errors are the engine's.
'use strict'

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

/** The process's generator from `options` (those of `new Generator`); again only with equal ones. */
function configure(options = {}) {
  const given = describe(options)
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
}

module.exports = {
  configure,
  sharedGenerator,
  settingsFromEnv,
  settingsOptions: binding.settingsOptions,
  reset,
}
