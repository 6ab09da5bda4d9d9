// Drizzle columns for flakeid IDs, whose value, when an insert leaves it out, comes
// from $defaultFn:
//   flakeId:   a PostgreSQL `bigint` in bigint mode, from the process's shared
//              generator (./settings) unless one is given;
//   flakeUuid: a PostgreSQL `uuid` (text in JS), a UUIDv7 from the process's shared
//              128-bit generator (the binding's uuid7(); no node id, no settings)
//              unless a UuidGenerator is given.
// drizzle-orm is an optional peer dependency: only this file needs it.
'use strict'

const { bigint, uuid } = require('./peer.js').peer('drizzle-orm/pg-core')
const { buildAtStart, sharedGenerator } = require('./settings.js')
const binding = require('../loader.js')

/** `[name, options]` of `column('id', options)` or `column(options)`. */
function args(name, options) {
  return typeof name === 'object' && name !== null ? [undefined, name] : [name, options]
}

/**
 * `flakeId('id').primaryKey()`, or `flakeId('id', { generator })`. The name may be
 * left out (Drizzle then takes the property's).
 */
function flakeId(name, options) {
  ;[name, options] = args(name, options)
  const given = options && options.generator
  const column = name === undefined ? bigint({ mode: 'bigint' }) : bigint(name, { mode: 'bigint' })
  if (!given) buildAtStart()
  return column.$defaultFn(() => (given || sharedGenerator()).nextId())
}

/** `flakeUuid('id').primaryKey()`, or `flakeUuid('id', { generator })` (a `UuidGenerator`). */
function flakeUuid(name, options) {
  ;[name, options] = args(name, options)
  const given = options && options.generator
  const column = name === undefined ? uuid() : uuid(name)
  return column.$defaultFn(given ? () => given.uuid7() : binding.uuid7)
}

module.exports = { flakeId, flakeUuid }
