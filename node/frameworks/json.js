// BigInt IDs through JSON without losing a digit. JSON.stringify throws on a
// bigint and JSON.parse turns a number above 2^53 into the nearest double, so IDs
// cross JSON as decimal strings: `replacer` writes them, `reviver(keys)` reads them
// back as bigints for the keys you name, and `installToJSON()` makes every bigint
// serialise itself (what a framework's own JSON.stringify needs).
'use strict'

const binding = require('../loader.js')

/** The engine's parser (`parseId`), its error given the JSON key as `field`. */
function parseId(key, value, layout) {
  try {
    return binding.parseId(value, layout)
  } catch (err) {
    if (err && err.code === 'FLAKEID_PARSE') err.field = key
    throw err
  }
}

/** A JSON.stringify replacer: every bigint becomes its decimal string. */
function replacer(_key, value) {
  return typeof value === 'bigint' ? value.toString() : value
}

// `source`: the value's source text, where JSON.parse gives revivers it (Node >= 21);
// `sources`: the same for the numbers of each array it revived (by array, then index).
function toId(key, value, layout, source, sources) {
  // With the source text a number is read exactly (as text); without it the engine
  // takes a number only when it is exact (a whole number up to 2^53 - 1).
  if (typeof value === 'number' && typeof source === 'string') return parseId(key, source, layout)
  if (Array.isArray(value)) {
    const texts = sources && sources.get(value)
    return value.map((v, i) => toId(`${key}[${i}]`, v, layout, texts && texts[i], sources))
  }
  if (value === null) return null
  return parseId(key, value, layout)
}

/**
 * A JSON.parse reviver that turns the values of `keys` (an array of property names,
 * or a function of the name) into bigints: decimal strings, arrays of them, and
 * numbers JSON.parse read exactly, each an ID of `layout` (a Layout or a preset
 * name, default 'snowflake'). A value that cannot be one is the engine's
 * FLAKEID_PARSE error, with the key in `field`.
 */
function reviver(keys, layout) {
  const wanted = typeof keys === 'function' ? keys : ((set) => (k) => set.has(k))(new Set(keys))
  // JSON.parse revives an array's elements (`this`: the array) before the array
  // itself: their source text is kept for when the array turns out to be an ID list.
  const sources = new WeakMap()
  return function revive(key, value, context) {
    const source = context && context.source
    if (typeof value === 'number' && typeof source === 'string' && Array.isArray(this)) {
      let texts = sources.get(this)
      if (!texts) sources.set(this, (texts = []))
      texts[key] = source
    }
    return wanted(key) ? toId(key, value, layout, source, sources) : value
  }
}

/** JSON.stringify with `replacer`. */
function stringify(value, space) {
  return JSON.stringify(value, replacer, space)
}

/** JSON.parse with `reviver(keys, layout)`. */
function parse(text, keys, layout) {
  return JSON.parse(text, reviver(keys, layout))
}

/**
 * Gives BigInt.prototype a toJSON that returns the decimal string, so any
 * JSON.stringify (Express's res.json, a logger, Prisma results) writes bigints
 * instead of throwing. Global, so opt-in; returns a function that undoes it.
 */
function installToJSON() {
  const had = Object.getOwnPropertyDescriptor(BigInt.prototype, 'toJSON')
  Object.defineProperty(BigInt.prototype, 'toJSON', {
    value: function toJSON() {
      return this.toString()
    },
    writable: true,
    configurable: true,
  })
  return function uninstall() {
    if (had) Object.defineProperty(BigInt.prototype, 'toJSON', had)
    else delete BigInt.prototype.toJSON
  }
}

module.exports = { replacer, reviver, stringify, parse, installToJSON }
