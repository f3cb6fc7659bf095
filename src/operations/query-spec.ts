/**
 * @module What an operation declares about its query: the JSON Schema of its canonical parameters and
 * the rules a schema cannot state (aliases, lists, alternatives). Both readers of a query take it: the
 * general path (query.ts) and the plain path (plain-query.ts).
 */

export type JsonSchema = Record<string, unknown>;

export interface QuerySpec {
  /** JSON Schema of the canonical parameters: an object with `properties` and `required`. */
  readonly schema: JsonSchema;
  /** Alias → canonical name. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Parameters given as comma-separated lists, or repeated (`ages=40&ages=38`), or both. */
  readonly lists?: readonly string[];
  /**
   * Pairs of which exactly one is required (`age` or a household's `ages`). The schema cannot say so:
   * a top-level `oneOf` is refused by several MCP clients' tool-schema checks, so the pair stays out of
   * `required` and is checked here, with every other error of the request: the first one missing reads
   * `Required` as a schema-required name would, both given is refused on the second.
   */
  readonly alternatives?: readonly (readonly [string, string])[];
  /** Pairs of which at most one may be given (where neither is also fine: plan detail's age or ages). */
  readonly exclusive?: readonly (readonly [string, string])[];
}
