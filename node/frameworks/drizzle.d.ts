import type { HasDefault, HasRuntimeDefault } from 'drizzle-orm'
import type { PgBigInt64BuilderInitial, PgUUIDBuilderInitial } from 'drizzle-orm/pg-core'

interface FlakeIdColumnOptions {
  /** Where IDs come from; default: the shared generator of '@flakeid/node/settings'. */
  generator?: { nextId(): bigint }
}
/** A bigint-mode column whose value, when an insert leaves it out, is the next ID ($defaultFn). */
export type FlakeIdColumn<TName extends string> = HasRuntimeDefault<HasDefault<PgBigInt64BuilderInitial<TName>>>

/** A `bigint` column in bigint mode whose default ($defaultFn) is the next flakeid ID. */
export declare function flakeId<TName extends string>(name: TName, options?: FlakeIdColumnOptions): FlakeIdColumn<TName>
export declare function flakeId(options?: FlakeIdColumnOptions): FlakeIdColumn<''>

interface FlakeUuidColumnOptions {
  /** Where UUIDs come from (a `UuidGenerator`); default: the process's shared one (`uuid7()`). */
  generator?: { uuid7(): string }
}
/** A `uuid` column whose value, when an insert leaves it out, is the next UUIDv7 ($defaultFn). */
export type FlakeUuidColumn<TName extends string> = HasRuntimeDefault<HasDefault<PgUUIDBuilderInitial<TName>>>

/** A `uuid` column whose default ($defaultFn) is the next UUIDv7 (text). */
export declare function flakeUuid<TName extends string>(name: TName, options?: FlakeUuidColumnOptions): FlakeUuidColumn<TName>
export declare function flakeUuid(options?: FlakeUuidColumnOptions): FlakeUuidColumn<''>
