import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'

/** Gives each row inserted into `tables` (table -> ID column) an ID it lacks. */
export declare class FlakeIdPlugin implements KyselyPlugin {
  constructor(options: { tables: Record<string, string>; generator?: { nextId(): bigint } })
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>>
}
