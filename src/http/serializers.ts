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

/** `,"premium_with_credit":` as bytes: the fixed text between the two premiums of a summary row. */
const CREDIT_KEY = Buffer.from(',"premium_with_credit":');
const NULL_BYTES = Buffer.from('null');

/**
 * Writes whole cents as the JSON number JavaScript prints for `cents / 100` ("453.27", "453.2",
 * "453"): the shortest round-tripping form of a two-decimal amount is its decimal digits without
 * trailing zeros. Returns the new offset; no string is made.
 */
export function writeCents(buf: Buffer, at: number, cents: number): number {
  let dollars = Math.floor(cents / 100);
  const rest = cents - dollars * 100;
  let digits = 1;
  for (let d = dollars; d >= 10; d = Math.floor(d / 10)) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    buf[at + i] = 48 + (dollars % 10);
    dollars = Math.floor(dollars / 10);
  }
  at += digits;
  if (rest !== 0) {
    buf[at++] = 46; // '.'
    buf[at++] = 48 + Math.floor(rest / 10);
    if (rest % 10 !== 0) buf[at++] = 48 + (rest % 10);
  }
  return at;
}

/** A row of a plan collection as the REST front writes it: a fragment and two premiums in cents. */
interface FragmentRow {
  readonly [SUMMARY_JSON]?: SummaryJson;
  readonly premiumCents?: number;
  /** -1: no credit estimated (null). */
  readonly creditCents?: number;
}

/**
 * Serializer for collections of plan summaries (search, compare): each row is its plan's immutable
 * pre-serialized fragment with the two premiums written in as digits, the envelope goes through
 * `envelope`. The body is assembled as bytes from fragments encoded once: a 25-plan page is ~17 KB,
 * and handing uWS a concatenated string cost more than computing the page (flattening plus UTF-8
 * encoding). The envelope keeps `_links` and `_embedded` first, as the schema orders them.
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
  const bytes = (b: Buffer): void => {
    scratch.set(b, at);
    at += b.length;
  };
  return (body) => {
    const { _links, _embedded, ...rest } = body as { _links: unknown; _embedded: { plans: ReadonlyArray<FragmentRow> } };
    at = 0;
    text(`{"_links":${JSON.stringify(_links)},"_embedded":{"plans":[`);
    const rows = _embedded.plans;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (i > 0) scratch[at++] = 44; // ','
      const f = row[SUMMARY_JSON];
      if (f === undefined || row.premiumCents === undefined || row.creditCents === undefined) {
        text(JSON.stringify(row));
        continue;
      }
      // Two premiums take at most 2 × 12 digits and the key between them.
      ensure(f.prefixBytes.length + f.suffixBytes.length + CREDIT_KEY.length + 32);
      bytes(f.prefixBytes);
      at = writeCents(scratch, at, row.premiumCents);
      bytes(CREDIT_KEY);
      if (row.creditCents < 0) bytes(NULL_BYTES);
      else at = writeCents(scratch, at, row.creditCents);
      bytes(f.suffixBytes);
    }
    const tail = envelope(rest);
    text(tail === '{}' ? ']}}' : `]},${tail.slice(1)}`);
    // A view of the scratch buffer, valid until the next call: the REST front hands it to uWS in the
    // same synchronous turn (uWS copies what it cannot send at once), so no per-request copy is made.
    return scratch.subarray(0, at);
  };
}
