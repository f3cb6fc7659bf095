/**
 * @module The request's parameters echoed in a link's query string, written as bytes (operation.ts
 * echoQuery, the same text): canonical names in table order, aliases rewritten, values percent-encoded
 * but for commas. Every byte is JSON-safe, so the same bytes go in a body and in a Link header.
 */
import { encodeValue, type QueryValues } from '../operations/operation.ts';
import type { ByteWriter } from '../encoding/byte-writer.ts';

/** Writes `?k=v&…` for the names of `order` the request gave; returns whether it wrote any. */
export function writeEcho(w: ByteWriter, order: readonly string[], raw: QueryValues): boolean {
  let any = false;
  for (let i = 0; i < order.length; i++) {
    const k = order[i]!;
    const v = raw.get(k);
    if (v === undefined) continue;
    w.byte(any ? 38 : 63); // & ?
    any = true;
    w.latin1(k);
    w.byte(61); // =
    w.latin1(encodeValue(v));
  }
  return any;
}
