/**
 * @module Response serializers compiled once from the operations' response schemas.
 *
 * fast-json-stringify writes exactly the declared fields, so a handler can never leak an internal
 * member into a response; whether it or JSON.stringify is faster on our bodies is measured in the
 * benchmark suite.
 */
import { writeCents } from '../encoding/cents-text.ts';
import fastJson from 'fast-json-stringify';
import type { JsonSchema } from '../operations/query.ts';
import { SUMMARY_JSON, type SummaryJson } from '../operations/plan-catalog.ts';
import { PROBLEM_RESPONSE } from '../operations/shared-schemas.ts';

export type Serializer = (body: Record<string, unknown>) => string;

export function compileSerializer(schema: JsonSchema): Serializer {
  // fast-json-stringify's Schema type rejects `type: [T, 'null']`, which it handles at run time.
  return fastJson(schema as never) as Serializer;
}

export const serializeProblem: Serializer = compileSerializer(PROBLEM_RESPONSE);

/** `,"premium_with_credit":` as bytes: the fixed text between the two premiums of a summary row. */
const CREDIT_KEY = Buffer.from(',"premium_with_credit":');

/** A row of a plan collection as the REST front writes it: a fragment and two premiums in cents. */
interface FragmentRow {
  readonly [SUMMARY_JSON]?: SummaryJson;
  readonly premiumCents?: number;
  /** -1: no credit estimated (null). */
  readonly creditCents?: number;
  /** A household's member breakdown (compare with ages): not in the fragments, so such a row is stringified. */
  readonly members?: unknown;
}

/** Stands in for `_embedded` while the envelope is serialized; no echoed value can contain a NUL. */
const EMBEDDED_PLACEHOLDER = '\u0000hpd-embedded\u0000';
const PLACEHOLDER_BYTES = Buffer.from(JSON.stringify(EMBEDDED_PLACEHOLDER));
const PLANS_OPEN = Buffer.from('{"plans":[');
const PLANS_CLOSE = Buffer.from(']}');

/**
 * Serializer for collections of plan summaries (search, compare): each row is its plan's immutable
 * pre-serialized fragment with the two premiums written in as digits. The envelope (`_links`, totals,
 * location) is serialized in one `envelope` call with a placeholder where `_embedded` goes and encoded
 * once; the bytes around the placeholder frame the rows, so the body keeps the schema's member order.
 * The body is assembled as bytes from fragments encoded once: a 25-plan page is ~17 KB, and handing uWS
 * a concatenated string cost more than computing the page (flattening plus UTF-8 encoding).
 */
export function fragmentSerializer(envelope: Serializer): (body: Record<string, unknown>) => Buffer {
  let scratch = Buffer.allocUnsafe(1 << 16);
  let outerBytes = Buffer.allocUnsafe(1 << 12);
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
    const embedded = body._embedded as { plans: ReadonlyArray<FragmentRow> };
    const rows = embedded.plans;
    // The body is this request's own: the placeholder is swapped in and out rather than the body copied
    // with a spread (a clone per request, and the object-clone IC was 0.5 % of a search under `perf`).
    body._embedded = EMBEDDED_PLACEHOLDER;
    let outer: string;
    try {
      outer = envelope(body);
    } finally {
      body._embedded = embedded;
    }
    if (outer.length * 3 > outerBytes.length) outerBytes = Buffer.allocUnsafe(outer.length * 3);
    const outerLength = outerBytes.write(outer, 0, 'utf8');
    const cut = outerBytes.indexOf(PLACEHOLDER_BYTES);
    at = 0;
    ensure(outerLength + PLANS_OPEN.length + PLANS_CLOSE.length);
    bytes(outerBytes.subarray(0, cut));
    bytes(PLANS_OPEN);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (i > 0) scratch[at++] = 44; // ','
      const f = row[SUMMARY_JSON];
      if (f === undefined || row.premiumCents === undefined || row.creditCents === undefined || (row.members ?? null) !== null) {
        text(JSON.stringify(row));
        continue;
      }
      // Two premiums take at most 2 × 12 digits and the key between them.
      ensure(f.prefixBytes.length + f.nullCreditSuffixBytes.length + 32);
      bytes(f.prefixBytes);
      at = writeCents(scratch, at, row.premiumCents);
      if (row.creditCents < 0) {
        bytes(f.nullCreditSuffixBytes);
        continue;
      }
      bytes(CREDIT_KEY);
      at = writeCents(scratch, at, row.creditCents);
      bytes(f.suffixBytes);
    }
    ensure(PLANS_CLOSE.length + outerLength);
    bytes(PLANS_CLOSE);
    bytes(outerBytes.subarray(cut + PLACEHOLDER_BYTES.length, outerLength));
    // A view of the scratch buffer, valid until the next call: the REST front hands it to uWS in the
    // same synchronous turn, and a write the kernel does not take at once copies it then
    // (response-writer.ts: uWS keeps no copy), so no per-request copy is made.
    return scratch.subarray(0, at);
  };
}
