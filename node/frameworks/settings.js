// One generator per process, configured once: from `configure(options)` or, when
// the application never calls it, from the environment (FLAKEID_NODE,
// FLAKEID_DATACENTER + FLAKEID_WORKER, FLAKEID_LEASE, FLAKEID_LAYOUT,
// FLAKEID_OVERFLOW), the settings a twelve-factor app has. The ORM helpers
// (./drizzle, ./kysely) take their IDs from it.
//
// Unlike a bare `new Generator()`, it refuses to start without a node source: an
// ORM's default runs in every replica, and replicas on node 0 issue the same IDs.
'use strict'

const { Generator } = require('../loader.js')

const ENV = {
  node: 'FLAKEID_NODE',
  datacenter: 'FLAKEID_DATACENTER',
  worker: 'FLAKEID_WORKER',
  lease: 'FLAKEID_LEASE',
  layout: 'FLAKEID_LAYOUT',
  overflow: 'FLAKEID_OVERFLOW',
}

function configError(field, message) {
  const err = new RangeError(`flakeid: invalid configuration: ${message}`)
  err.code = 'FLAKEID_CONFIG'
  err.field = field
  return err
}

// A whole number in decimal, or (node only) a node source the engine reads:
// env:VAR, hostname, mac, ipv4.
function fromEnvValue(field, text) {
  if (/^\d+$/.test(text)) return Number(text)
  if (field === 'node') return text
  throw configError(field, `${field} must be a whole number, got ${JSON.stringify(text)} (from ${ENV[field]})`)
}

/** The generator options the environment gives (FLAKEID_*); unset ones are left out. */
function settingsFromEnv(env = process.env) {
  const options = {}
  for (const [field, name] of Object.entries(ENV)) {
    const text = env[name]
    if (text === undefined || text === '') continue
    options[field] = field === 'lease' || field === 'layout' || field === 'overflow' ? text : fromEnvValue(field, text)
  }
  return options
}

/** Throws FLAKEID_CONFIG (field 'node') when `options` names no node id and no lease. */
function requireNode(options) {
  const given = (k) => options[k] !== undefined && options[k] !== null
  if (!given('node') && !given('worker') && !given('lease')) {
    throw configError(
      'node',
      'no node id given: set node (a number, env:VAR, hostname, mac or ipv4), datacenter and worker, ' +
        'or lease (FLAKEID_NODE, FLAKEID_DATACENTER + FLAKEID_WORKER or FLAKEID_LEASE); without one every ' +
        'replica would run as node 0 and issue the same IDs',
    )
  }
}

let shared = null

/**
 * Sets the process's generator from `options` (those of `new Generator`); a node
 * source is required. Configuring twice is an error: two generators in one process
 * on one node id would repeat IDs.
 */
function configure(options) {
  if (shared) throw configError('node', 'the shared generator is already configured (configure() once per process)')
  requireNode(options || {})
  shared = new Generator(options)
  return shared
}

/** The process's generator: configure()'s, or one from the environment on first use. */
function sharedGenerator() {
  return shared || configure(settingsFromEnv())
}

/** Forgets the shared generator (releasing its lease): tests, and a clean shutdown. */
function reset() {
  if (shared && typeof shared.releaseLease === 'function') shared.releaseLease()
  shared = null
}

module.exports = { configure, sharedGenerator, settingsFromEnv, requireNode, reset }
