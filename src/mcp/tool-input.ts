/**
 * @module A tool's input schema, generated from its operation's query spec (docs/compatibility.md#mcp-tools).
 *
 * Names, types, ranges, enumerations, list parameters and the required set come from the operation,
 * so REST and MCP cannot accept different values. The tool adds only what is its own: argument names
 * where they differ from the REST ones, the wording a model reads, and the few keywords the published schemas have
 * that the REST parameter does not have (the plan ID pattern: REST answers an odd plan ID with a 404,
 * which docs/compatibility.md#plan-detail fixes, so it does not validate the shape).
 */
import type { CompiledQuery, JsonSchema } from '../operations/query.ts';

/**
 * Keywords of a tool argument over the REST parameter's: they replace the REST keyword of the same
 * name; a keyword set to `undefined` is left out of the tool's schema.
 */
export type ToolParam = Readonly<Record<string, unknown>>;

/** Keyword order of the published schemas, the order they were published in; the description comes last. */
const KEYWORD_ORDER = [
  'type',
  'enum',
  'const',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'items',
];

/**
 * REST-only keywords: the OpenAPI example, defaults the REST validation fills in (a tool's description
 * states them) and the Pro marker of the OpenAPI document (a tool's description states the tier).
 */
const REST_ONLY: ReadonlySet<string> = new Set(['example', 'default', 'x-pro']);

/**
 * The input schema of a tool over `query`: every REST parameter in the REST order, renamed by
 * `rename` (tool argument → REST parameter), with `params` (by tool argument name) over its keywords.
 * Aliases are not published (docs/compatibility.md#mcp-tools: no pagination aliases).
 */
export function toolInputSchema(
  query: CompiledQuery,
  rename: Readonly<Record<string, string>> = {},
  params: Readonly<Record<string, ToolParam>> = {},
): JsonSchema {
  const argOf = new Map(Object.entries(rename).map(([arg, param]) => [param, arg]));
  const properties: Record<string, JsonSchema> = {};
  for (const param of query.order) {
    const arg = argOf.get(param) ?? param;
    properties[arg] = toolParam(query.props[param] ?? {}, params[arg]);
  }
  const required = ((query.spec.schema.required ?? []) as readonly string[]).map((p) => argOf.get(p) ?? p);
  return { type: 'object', properties, required, additionalProperties: false };
}

function toolParam(rest: JsonSchema, over: ToolParam = {}): JsonSchema {
  const merged: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    // A pattern fixes the length already (the published schemas give `zip` and `state` by their pattern alone).
    const implied = (k === 'minLength' || k === 'maxLength') && rest.pattern !== undefined;
    if (!REST_ONLY.has(k) && !implied) merged[k] = v;
  }
  Object.assign(merged, over);
  if (merged.items !== undefined) merged.items = toolParam(merged.items as JsonSchema);
  const keys = [
    ...KEYWORD_ORDER.filter((k) => k in merged),
    ...Object.keys(merged).filter((k) => !KEYWORD_ORDER.includes(k) && k !== 'description'),
    'description',
  ];
  const out: JsonSchema = {};
  for (const k of keys) if (merged[k] !== undefined) out[k] = merged[k];
  return out;
}
