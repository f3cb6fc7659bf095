/**
 * @module Content codings of the REST front (`Accept-Encoding: br, gzip`), decided by measurement
 * (bench/compression.bench.ts, national build, CPU µs median per response on this 2-core box):
 *
 * | body                      | identity | brotli q1      | brotli q4      | gzip 1         | gzip 6         |
 * |---------------------------|---------:|----------------|----------------|----------------|----------------|
 * | search page (25 plans)    | 15.6 KB  | 2.2 KB, 41 µs  | 1.9 KB, 128 µs | 2.1 KB, 62 µs  | 1.9 KB, 106 µs |
 * | plan detail               | 1.8 KB   | 0.9 KB, 18 µs  | 0.8 KB, 48 µs  | 0.9 KB, 26 µs  | 0.85 KB, 29 µs |
 *
 * - Cached immutable responses (years, ZIPs, issuers, plan detail) are compressed once, when they enter
 *   the response cache, at brotli q4 and gzip 6 (~80 µs per entry, about one computed request: a client
 *   walking every plan id cannot make the server spend much more per request than it already does),
 *   and both variants count toward the cache's byte budget. The OpenAPI document (once per build) gets
 *   brotli q6 and gzip 9: on a 110 KB JSON, q6 took 10.6 ms and q11 139 ms (an event-loop stall) for
 *   4 % fewer bytes.
 * - Computed search pages are not compressed: even brotli q1 (41 µs) would nearly double the ~50 µs of
 *   CPU a computed search costs, halving search throughput, to save ~13 KB a page. Integrators on slow
 *   links are better served by compression at the proxy or CDN in front of the API (README).
 *
 * Every coding of a resource carries the same weak ETag: a weak validator only claims semantic
 * equivalence (RFC 9110 §8.8.1), which all codings of one body have, so `If-None-Match` works whatever
 * coding the cached copy was received in. Responses that have codings say `Vary: Accept-Encoding`.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export type Coding = 'br' | 'gzip';

/** A body's compressed variants; a coding is absent when it would not make the body smaller. */
export interface Variants {
  readonly br?: Buffer;
  readonly gzip?: Buffer;
}

/** Below this, a coding's own framing (~20 bytes) eats what it saves. */
const MIN_BYTES = 256;

/** Compresses a body for the response cache (`once`: the OpenAPI document, compressed at the best settings). */
export function compressVariants(body: Buffer, once = false): Variants {
  if (body.length < MIN_BYTES) return {};
  // The window fitted to the body: brotli otherwise allocates its 4 MiB default window per call.
  const lgwin = Math.max(
    constants.BROTLI_MIN_WINDOW_BITS,
    Math.min(constants.BROTLI_MAX_WINDOW_BITS, Math.ceil(Math.log2(body.length + 1))),
  );
  const br = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: once ? 6 : 4,
      [constants.BROTLI_PARAM_LGWIN]: lgwin,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  const gzip = gzipSync(body, { level: once ? 9 : 6 });
  return { ...(br.length < body.length ? { br } : {}), ...(gzip.length < body.length ? { gzip } : {}) };
}

/** Bytes held by a body's variants (for the cache's budget). */
export function variantBytes(v: Variants): number {
  return (v.br?.length ?? 0) + (v.gzip?.length ?? 0);
}

/**
 * The coding to answer with, from an `Accept-Encoding` value (RFC 9110 §12.5.3), among those the body
 * has; null: identity. A coding is acceptable when listed, or covered by `*`, with q > 0; the highest q
 * wins, brotli before gzip on a tie (smaller). `identity;q=0` with nothing acceptable still gets
 * identity: a body the client may be unable to read beats an error it certainly cannot.
 * Malformed parts are ignored, never an error.
 */
export function chooseCoding(header: string, have: Variants): Coding | null {
  if (header === '' || (have.br === undefined && have.gzip === undefined)) return null;
  let br = -1;
  let gzip = -1;
  let star = -1;
  for (const part of header.split(',')) {
    const semi = part.indexOf(';');
    const name = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase();
    const q = semi < 0 ? 1 : qValue(part.slice(semi + 1));
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip, q);
    else if (name === '*') star = q;
  }
  if (br < 0) br = star;
  if (gzip < 0) gzip = star;
  if (have.br === undefined) br = 0;
  if (have.gzip === undefined) gzip = 0;
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? 'br' : 'gzip';
}

/** The q of a coding's parameters (`q=0.5`); 1 when absent, 0 when unreadable (RFC 9110 §12.4.2: 0–1, three decimals). */
function qValue(params: string): number {
  for (const p of params.split(';')) {
    const t = p.trim().toLowerCase();
    if (!t.startsWith('q=')) continue;
    const text = t.slice(2).trim();
    if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(text)) return 0;
    return Number(text);
  }
  return 1;
}
