// node-postgres returns BIGINT (int8, oid 20) as a string. `types` reads it as a
// bigint instead, for one Pool or Client (`new pg.Pool({ types })`), leaving pg's
// global parsers alone. pg is an optional peer dependency.
'use strict'

const pg = require('./peer.js').peer('pg')

const INT8 = 20
const INT8_ARRAY = 1016

const types = {
  getTypeParser(oid, format) {
    if (oid === INT8 && format !== 'binary') return BigInt
    if (oid === INT8_ARRAY && format !== 'binary') {
      const parseArray = pg.types.getTypeParser(INT8_ARRAY, 'text')
      return (text) => parseArray(text).map((v) => (v === null ? null : BigInt(v)))
    }
    return pg.types.getTypeParser(oid, format)
  },
}

module.exports = { types }
