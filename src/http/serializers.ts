/**
 * @module Response serializers compiled once from the operations' response schemas.
 *
 * fast-json-stringify writes exactly the declared fields, so a handler can never leak an internal
 * member into a response; whether it or JSON.stringify is faster on our bodies is measured in the
 * benchmark suite.
 */
import fastJson from 'fast-json-stringify';
import type { JsonSchema } from '../operations/query.ts';
import { SUMMARY_JSON, type SummaryJson } from '../operations/plan-catalog.ts';
import { PROBLEM_RESPONSE } from '../operations/schemas/common.ts';

export type Serializer = (body: Record<string, unknown>) => string;

export function compileSerializer(schema: JsonSchema): Serializer {
  // fast-json-stringify's Schema type rejects `type: [T, 'null']`, which it handles at run time.
  return fastJson(schema as never) as Serializer;
}

export const serializeProblem: Serializer = compileSerializer(PROBLEM_RESPONSE);

/**
 * Serializer for collections of plan summaries (search, compare): each row is its plan's immutable
 * pre-serialized fragment with the two premiums spliced in, the envelope goes through `envelope`.
 * The body is assembled as bytes from fragments encoded once: a 25-plan page is ~17 KB, and handing
 * uWS a concatenated string cost more than computing the page (flattening plus UTF-8 encoding).
 * The envelope keeps `_links` and `_embedded` first, as the schema orders them.
 */
export function fragmentSerializer(envelope: Serializer): (body: Record<string, unknown>) => Buffer {
  let scratch = Buffer.allocUnsafe(1 << 16);
  let at = 0;
  const ensure = (n: number): void => {
    if (at + n <= scratch.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(scratch.length * 2, at + n));
    bigger.set(scratch.subarray(0, at), 0);
    scratch = bigger;
  };
  const text = (s: string): void => {
    ensure(s.length * 3);
    at += scratch.write(s, at, 'utf8');
  };
  // Numbers and JSON punctuation are ASCII: one byte per character, no encoder call.
  const ascii = (s: string): void => {
    ensure(s.length);
    for (let i = 0; i < s.length; i++) scratch[at++] = s.charCodeAt(i);
  };
  return (body) => {
    const { _links, _embedded, ...rest } = body as { _links: unknown; _embedded: { plans: Array<Record<string | symbol, unknown>> } };
    at = 0;
    text(`{"_links":${JSON.stringify(_links)},"_embedded":{"plans":[`);
    let first = true;
    for (const row of _embedded.plans) {
      if (!first) ascii(',');
      first = false;
      const f = row[SUMMARY_JSON] as SummaryJson | undefined;
      if (f === undefined) {
        text(JSON.stringify(row));
        continue;
      }
      ensure(f.prefixBytes.length + f.suffixBytes.length + 64);
      scratch.set(f.prefixBytes, at);
      at += f.prefixBytes.length;
      ascii(`${row.premium as number},"premium_with_credit":${row.premium_with_credit === null ? 'null' : (row.premium_with_credit as number)}`);
      scratch.set(f.suffixBytes, at);
      at += f.suffixBytes.length;
    }
    const tail = envelope(rest);
    text(tail === '{}' ? ']}}' : `]},${tail.slice(1)}`);
    // A view of the scratch buffer, valid until the next call: the REST front hands it to uWS in the
    // same synchronous turn (uWS copies what it cannot send at once), so no per-request copy is made.
    return scratch.subarray(0, at);
  };
}
