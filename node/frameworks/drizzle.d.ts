import type { PgBigInt64BuilderInitial } from 'drizzle-orm/pg-core'

interface FlakeIdColumnOptions {
  /** Where IDs come from; default: the shared generator of '@flakeid/node/settings'. */
  generator?: { nextId(): bigint }
}
/** A `bigint` column in bigint mode whose default ($defaultFn) is the next flakeid ID. */
export declare function flakeId<TName extends string>(name: TName, options?: FlakeIdColumnOptions): PgBigInt64BuilderInitial<TName>
export declare function flakeId(options?: FlakeIdColumnOptions): PgBigInt64BuilderInitial<''>
