// A Drizzle column for flakeid IDs: a PostgreSQL `bigint` in bigint mode whose
// value, when an insert leaves it out, comes from $defaultFn — the process's shared
// generator (./settings) unless one is given. drizzle-orm is an optional peer
// dependency: only this file needs it.
'use strict'

const { bigint } = require('./peer.js').peer('drizzle-orm/pg-core')
const { sharedGenerator } = require('./settings.js')

/**
 * `flakeId('id').primaryKey()`, or `flakeId('id', { generator })`. The name may be
 * left out (Drizzle then takes the property's).
 */
function flakeId(name, options) {
  if (typeof name === 'object' && name !== null) [name, options] = [undefined, name]
  const given = options && options.generator
  const column = name === undefined ? bigint({ mode: 'bigint' }) : bigint(name, { mode: 'bigint' })
  return column.$defaultFn(() => (given || sharedGenerator()).nextId())
}

module.exports = { flakeId }
