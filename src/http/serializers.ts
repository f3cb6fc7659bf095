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
 * Rows without a fragment fall back to JSON.stringify. The envelope keeps `_links` and `_embedded`
 * first, as the schema orders them.
 */
export function fragmentSerializer(envelope: Serializer): Serializer {
  return (body) => {
    const { _links, _embedded, ...rest } = body as { _links: unknown; _embedded: { plans: Array<Record<string | symbol, unknown>> } };
    let rows = '';
    for (const row of _embedded.plans) {
      const f = row[SUMMARY_JSON] as SummaryJson | undefined;
      const one = f === undefined ? JSON.stringify(row) : `${f.prefix}${row.premium as number},"premium_with_credit":${row.premium_with_credit === null ? 'null' : (row.premium_with_credit as number)}${f.suffix}`;
      rows = rows === '' ? one : `${rows},${one}`;
    }
    const tail = envelope(rest);
    return `{"_links":${JSON.stringify(_links)},"_embedded":{"plans":[${rows}]}${tail === '{}' ? '}' : `,${tail.slice(1)}`}`;
  };
}
