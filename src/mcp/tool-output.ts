/**
 * @module A tool's output schema: its operation's response schema, spelled for the clients that read it.
 *
 * The response schemas say "nullable" as `type: [T, 'null']`, the one spelling draft-07 (which the REST
 * serializers compile: fast-json-stringify decides `anyOf` at run time, slowly) and OpenAPI 3.1 share.
 * Model clients map tool schemas onto single-`type` dialects (Gemini's function declarations, the
 * OpenAPI 3.0 subset) and reject or drop a type array; the MCP Inspector's `--strict` flags each one.
 * The tool's copy therefore says the same with `anyOf` branches of one type each, and nothing else
 * changes: a body valid under one is valid under the other.
 */
import type { JsonSchema } from '../operations/query.ts';

export function toolOutputSchema(response: JsonSchema): JsonSchema {
  return portable(response) as JsonSchema;
}

function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    // Names under `properties` are the body's members, not keywords: only their schemas are rewritten.
    out[k] = k === 'properties' && typeof v === 'object' && v !== null ? mapValues(v as Record<string, unknown>) : portable(v);
  }
  if (!Array.isArray(out.type)) return out;
  const { type, ...rest } = out;
  const types = type as string[];
  // Keywords that constrain one type stay with it (an enum of strings, a string's pattern), so each
  // branch is exactly the schema of that type; `description` and `default` describe the whole value.
  const { description, ...constraints } = rest;
  const anyOf = types.map((t) => (t === 'null' ? { type: 'null' } : { type: t, ...only(t, constraints) }));
  return description === undefined ? { anyOf } : { description, anyOf };
}

/**
 * A branch's constraints with its `enum` cut to values of the branch's type: null is the null branch's
 * (a nullable enum lists it), and single-type dialects refuse an enum value of another type.
 */
function only(type: string, constraints: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(constraints.enum)) return constraints;
  return { ...constraints, enum: constraints.enum.filter((v) => ofType(type, v)) };
}

function ofType(type: string, v: unknown): boolean {
  if (v === null) return type === 'null';
  if (type === 'integer') return Number.isInteger(v);
  if (type === 'array') return Array.isArray(v);
  if (type === 'object') return typeof v === 'object' && !Array.isArray(v);
  return typeof v === type;
}

function mapValues(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) out[name] = portable(schema);
  return out;
}
