/**
 * node-postgres type parsers reading BIGINT (and BIGINT[]) as bigint, for one Pool or
 * Client: `new pg.Pool({ types })` (pg's CustomTypesConfig).
 */
export declare const types: {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => any
}
