import type { CustomTypesConfig } from 'pg'

/** node-postgres type parsers reading BIGINT (and BIGINT[]) as bigint, for one Pool or Client. */
export declare const types: CustomTypesConfig
