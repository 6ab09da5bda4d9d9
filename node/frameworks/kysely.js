// A Kysely plugin that gives each inserted row an ID: for the tables it is told
// about, an INSERT without the ID column gets one, and a row whose ID is left out
// (Kysely's DEFAULT) gets one. Rows that carry an ID keep it. Kysely is an optional
// peer dependency: only this file needs it.
'use strict'

const { ColumnNode, PrimitiveValueListNode, ValueListNode, ValueNode, ValuesNode, DefaultInsertValueNode } = require('./peer.js').peer('kysely')
const { buildAtStart, sharedGenerator } = require('./settings.js')
const binding = require('../loader.js')

class FlakeIdPlugin {
  /**
   * @param {{ tables: Record<string, string>, generator?: { nextId(): bigint } }} options
   *   `tables` maps a table name to its ID column; `generator` defaults to the
   *   process's shared one (./settings: configure() or FLAKEID_* variables).
   */
  constructor(options) {
    const tables = options && options.tables
    binding.checkTables(tables) // the engine's rule and words (FLAKEID_CONFIG, field tables)
    this.tables = new Map(Object.entries(tables))
    this.generator = options.generator || null
    if (!this.generator) buildAtStart()
  }

  transformQuery({ node }) {
    if (node.kind !== 'InsertQueryNode' || !node.into || !node.values || !ValuesNode.is(node.values)) return node
    const column = this.tables.get(node.into.table.identifier.name)
    if (!column) return node
    const gen = this.generator || (this.generator = sharedGenerator())
    const columns = node.columns || []
    const at = columns.findIndex((c) => c.column.name === column)
    const rows = node.values.values.map((row) => {
      if (at === -1) {
        return PrimitiveValueListNode.is(row)
          ? PrimitiveValueListNode.create([...row.values, gen.nextId()])
          : ValueListNode.create([...row.values, ValueNode.create(gen.nextId())])
      }
      if (PrimitiveValueListNode.is(row)) {
        if (row.values[at] !== undefined && row.values[at] !== null) return row
        const values = [...row.values]
        values[at] = gen.nextId()
        return PrimitiveValueListNode.create(values)
      }
      if (!DefaultInsertValueNode.is(row.values[at])) return row
      const values = [...row.values]
      values[at] = ValueNode.create(gen.nextId())
      return ValueListNode.create(values)
    })
    if (at === -1) {
      return { ...node, columns: [...columns, ColumnNode.create(column)], values: ValuesNode.create(rows) }
    }
    return { ...node, values: ValuesNode.create(rows) }
  }

  async transformResult({ result }) {
    return result
  }
}

module.exports = { FlakeIdPlugin }
