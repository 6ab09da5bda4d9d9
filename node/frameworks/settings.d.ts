import type { Generator, GeneratorOptions } from '../index'

/** Sets the process's generator; a node source (node, worker or lease) is required. */
export declare function configure(options: GeneratorOptions): Generator
/** configure()'s generator, or one from the FLAKEID_* variables on first use. */
export declare function sharedGenerator(): Generator
/** FLAKEID_NODE, FLAKEID_DATACENTER, FLAKEID_WORKER, FLAKEID_LEASE, FLAKEID_LAYOUT, FLAKEID_OVERFLOW. */
export declare function settingsFromEnv(env?: Record<string, string | undefined>): GeneratorOptions
/** Throws FLAKEID_CONFIG (field 'node') when no node id and no lease is given. */
export declare function requireNode(options: GeneratorOptions): void
/** Forgets the shared generator, releasing its lease. */
export declare function reset(): void
