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
import { PROBLEM_RESPONSE } from '../operations/shared-schemas.ts';

export type Serializer = (body: Record<string, unknown>) => string;

export function compileSerializer(schema: JsonSchema): Serializer {
  // fast-json-stringify's Schema type rejects `type: [T, 'null']`, which it handles at run time.
  return fastJson(schema as never) as Serializer;
}

export const serializeProblem: Serializer = compileSerializer(PROBLEM_RESPONSE);

/** `,"premium_with_credit":` as bytes: the fixed text between the two premiums of a summary row. */
const CREDIT_KEY = Buffer.from(',"premium_with_credit":');

/**
 * Writes whole cents as the JSON number JavaScript prints for `cents / 100` ("453.27", "453.2",
 * "453"): the shortest round-tripping form of a two-decimal amount is its decimal digits without
 * trailing zeros. Returns the new offset; no string is made.
 */
export function writeCents(buf: Buffer, at: number, cents: number): number {
  // Premiums are far below 2^31 cents, so integer arithmetic (`| 0`) is exact; doubles would cost an
  // fmod per digit.
  let dollars = (cents / 100) | 0;
  const rest = cents - dollars * 100;
  let digits = 1;
  for (let d = dollars; d >= 10; d = (d / 10) | 0) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    const next = (dollars / 10) | 0;
    buf[at + i] = 48 + dollars - next * 10;
    dollars = next;
  }
  at += digits;
  if (rest !== 0) {
    const tens = (rest / 10) | 0;
    buf[at++] = 46; // '.'
    buf[at++] = 48 + tens;
    if (rest !== tens * 10) buf[at++] = 48 + rest - tens * 10;
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
 * Thread-private copies of the catalog's fragments, made on a row's first use. The catalog keeps them
 * in a SharedArrayBuffer (shared with the REST workers), and V8 copies out of shared memory through a
 * slow path: the ~50 copies of a 25-plan page took 6.8 µs from shared views and 1.9 µs from private
 * buffers (one thread, national build, 400 bench search pages). The cost is at most the catalog's
 * ~11 MB per thread, for the plans that thread actually served; the map dies with its build.
 */
const PRIVATE = new WeakMap<SummaryJson, SummaryJson>();

function privateFragments(f: SummaryJson): SummaryJson {
  let p = PRIVATE.get(f);
  if (p === undefined) {
    const nullCreditSuffixBytes = Buffer.from(f.nullCreditSuffixBytes);
    p = {
      prefixBytes: Buffer.from(f.prefixBytes),
      nullCreditSuffixBytes,
      suffixBytes: nullCreditSuffixBytes.subarray(f.nullCreditSuffixBytes.length - f.suffixBytes.length),
    };
    PRIVATE.set(f, p);
  }
  return p;
}

/** Stands in for `_embedded` while the envelope is serialized; no echoed value can contain a NUL. */
const EMBEDDED_PLACEHOLDER = '\u0000hpd-embedded\u0000';
const PLACEHOLDER_JSON = JSON.stringify(EMBEDDED_PLACEHOLDER);

/**
 * Serializer for collections of plan summaries (search, compare): each row is its plan's immutable
 * pre-serialized fragment with the two premiums written in as digits. The envelope (`_links`, totals,
 * location) is serialized in one `envelope` call with a placeholder where `_embedded` goes, then split
 * around it, so the body keeps the schema's member order. The body is assembled as bytes from
 * fragments encoded once: a 25-plan page is ~17 KB, and handing uWS a concatenated string cost more
 * than computing the page (flattening plus UTF-8 encoding).
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
    const rows = (body._embedded as { plans: ReadonlyArray<FragmentRow> }).plans;
    const outer = envelope({ ...body, _embedded: EMBEDDED_PLACEHOLDER });
    const cut = outer.indexOf(PLACEHOLDER_JSON);
    at = 0;
    text(outer.slice(0, cut));
    text('{"plans":[');
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (i > 0) scratch[at++] = 44; // ','
      const shared = row[SUMMARY_JSON];
      if (shared === undefined || row.premiumCents === undefined || row.creditCents === undefined) {
        text(JSON.stringify(row));
        continue;
      }
      const f = privateFragments(shared);
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
    text(']}');
    text(outer.slice(cut + PLACEHOLDER_JSON.length));
    // A view of the scratch buffer, valid until the next call: the REST front hands it to uWS in the
    // same synchronous turn (uWS copies what it cannot send at once), so no per-request copy is made.
    return scratch.subarray(0, at);
  };
}
