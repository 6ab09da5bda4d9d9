import type { HasDefault, HasRuntimeDefault } from 'drizzle-orm'
import type { PgBigInt64BuilderInitial } from 'drizzle-orm/pg-core'

interface FlakeIdColumnOptions {
  /** Where IDs come from; default: the shared generator of '@flakeid/node/settings'. */
  generator?: { nextId(): bigint }
}
/** A bigint-mode column whose value, when an insert leaves it out, is the next ID ($defaultFn). */
export type FlakeIdColumn<TName extends string> = HasRuntimeDefault<HasDefault<PgBigInt64BuilderInitial<TName>>>

/** A `bigint` column in bigint mode whose default ($defaultFn) is the next flakeid ID. */
export declare function flakeId<TName extends string>(name: TName, options?: FlakeIdColumnOptions): FlakeIdColumn<TName>
export declare function flakeId(options?: FlakeIdColumnOptions): FlakeIdColumn<''>
