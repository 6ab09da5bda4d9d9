/** A JSON.stringify replacer: every bigint becomes its decimal string. */
export declare function replacer(key: string, value: unknown): unknown
/** A JSON.parse reviver: the values of `keys` (decimal strings, exact numbers, arrays of them) become bigints, IDs of `layout` (default 'snowflake'). */
export declare function reviver(
  keys: readonly string[] | ((key: string) => boolean),
  layout?: import('../index').Layout | string,
): (key: string, value: unknown, context?: { source?: string }) => unknown
/** JSON.stringify with `replacer`. */
export declare function stringify(value: unknown, space?: string | number): string
/** JSON.parse with `reviver(keys, layout)`. */
export declare function parse(
  text: string,
  keys: readonly string[] | ((key: string) => boolean),
  layout?: import('../index').Layout | string,
): any
/** BigInt.prototype.toJSON writing the decimal string (global, opt-in); returns the undo. */
export declare function installToJSON(): () => void
