// One generator per process for the ORM helpers (./drizzle, ./kysely): configure()'s or, when
// the application never calls it, the FLAKEID_* variables' (the engine's list: optionsFromEnv),
// with no node id a free one on this host (the engine's default). Configuring again with other options
// is refused. Names, values and errors are the engine's.
'use strict'

const binding = require('../loader.js')

let shared = null
let sharedWith = null
const shown = (options) => JSON.stringify(options, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))

/** The process's generator from `options` (those of `new Generator`); again only with the same ones. */
function configure(options = {}) {
  if (shared && shown(options) !== sharedWith) binding.configuredTwice(sharedWith, shown(options))
  if (!shared) [shared, sharedWith] = [new binding.Generator(options), shown(options)]
  return shared
}

/** The process's generator: configure()'s, or one from the environment on first use. */
const sharedGenerator = () => shared || configure(settingsFromEnv())

/** The `new Generator` options the FLAKEID_* variables give; unset ones are left out. */
const settingsFromEnv = (env = process.env) => binding.optionsFromEnv(env)

/** Forgets the shared generator (releasing its lease): tests, and a clean shutdown. */
function reset() {
  if (shared && typeof shared.releaseLease === 'function') shared.releaseLease()
  shared = sharedWith = null
}

module.exports = { configure, sharedGenerator, settingsFromEnv, settingsOptions: binding.settingsOptions, reset }
