import type { Generator, GeneratorOptions } from '../index'

/** The app's own PostgreSQL, for `lease: 'database'`: a pg Pool or Client, a Drizzle database over one, a pg config, or a connection string. */
export type Database = string | { $client?: unknown; options?: object; connectionParameters?: object } | Record<string, unknown>
/** Sets the process's generator, with requireNode (a node source: node, worker or lease); again only with the same options. `database`: the connection `lease: 'database'` leases from. */
export declare function configure(options?: GeneratorOptions, context?: { database?: Database }): Generator
/** configure()'s generator, or one from the FLAKEID_* variables on first use. */
export declare function sharedGenerator(): Generator
/** In a `cluster` worker, builds the process's generator once the worker's synchronous start-up has run, so that a refused node id stops the worker before it listens; elsewhere nothing (built on first use). The Drizzle column and the Kysely plugin call it. */
export declare function buildAtStart(): void
/** The options the FLAKEID_<NAME> variables give (the engine's list: every option of `new Generator` but `clock`). */
export declare function settingsFromEnv(env?: Record<string, string | undefined>): GeneratorOptions
/** The options a settings mapping gives by the engine's names (`{ NODE: 3, 'clock-backwards': 'wait' }`): `configure(settingsOptions(mapping))`. */
export declare function settingsOptions(settings: Record<string, unknown>): GeneratorOptions
/** Forgets the shared generator, releasing its lease. */
export declare function reset(): void
