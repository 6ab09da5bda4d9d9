// BigInt IDs through JSON without losing a digit. JSON.stringify throws on a
// bigint and JSON.parse turns a number above 2^53 into the nearest double, so IDs
// cross JSON as decimal strings: `replacer` writes them, `reviver(keys)` reads them
// back as bigints for the keys you name, and `installToJSON()` makes every bigint
// serialise itself (what a framework's own JSON.stringify needs).
'use strict'

const MAX = (1n << 64n) - 1n

function parseError(key, message) {
  const err = new RangeError(`flakeid: parse error: ${key}: ${message}`)
  err.code = 'FLAKEID_PARSE'
  err.field = key
  return err
}

/** A JSON.stringify replacer: every bigint becomes its decimal string. */
function replacer(_key, value) {
  return typeof value === 'bigint' ? value.toString() : value
}

// `source`: the value's source text, where JSON.parse gives revivers it (Node >= 21);
// `sources`: the same for the numbers of each array it revived (by array, then index).
function toId(key, value, source, sources) {
  if (typeof value === 'string') {
    if (!/^(0|[1-9][0-9]{0,19})$/.test(value)) throw parseError(key, `${JSON.stringify(value)} is not a decimal ID`)
    const id = BigInt(value)
    if (id > MAX) throw parseError(key, `${value} is above 2^64 - 1`)
    return id
  }
  if (typeof value === 'number') {
    // With the source text a number is read exactly; without it only a number below
    // 2^53 is known to be whole.
    if (typeof source === 'string') return toId(key, source)
    if (Number.isSafeInteger(value) && value >= 0) return BigInt(value)
    throw parseError(key, `the number ${value} is past 2^53 and JSON.parse has rounded it: send IDs as strings`)
  }
  if (Array.isArray(value)) {
    const texts = sources && sources.get(value)
    return value.map((v, i) => toId(`${key}[${i}]`, v, texts && texts[i], sources))
  }
  if (value === null) return null
  throw parseError(key, `a ${typeof value} is not an ID`)
}

/**
 * A JSON.parse reviver that turns the values of `keys` (an array of property names,
 * or a function of the name) into bigints: decimal strings, arrays of them, and
 * numbers JSON.parse read exactly. A value that cannot be an ID is a RangeError
 * with code FLAKEID_PARSE naming the key.
 */
function reviver(keys) {
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
    return wanted(key) ? toId(key, value, source, sources) : value
  }
}

/** JSON.stringify with `replacer`. */
function stringify(value, space) {
  return JSON.stringify(value, replacer, space)
}

/** JSON.parse with `reviver(keys)`. */
function parse(text, keys) {
  return JSON.parse(text, reviver(keys))
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
