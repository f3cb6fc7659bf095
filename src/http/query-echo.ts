/**
 * @module The request's parameters echoed in a link's query string, written as bytes (operation.ts
 * echoQuery, the same text): canonical names in table order, aliases rewritten, values percent-encoded
 * but for commas. Every byte is JSON-safe, so the same bytes go in a body and in a Link header.
 */
import { encodeValue, type QueryValues } from '../operations/operation.ts';
import type { ByteWriter } from '../encoding/byte-writer.ts';

/**
 * Writes `?k=v&…` for the names of `order` the request gave into each writer of `into` that takes them:
 * `into[j]` takes the names whose bit j is set in `member` (by position in `order`; null: every writer
 * takes every name), so one pass writes the echoes of a query and of its subsets, each value looked up
 * and encoded once. Returns the bits of the writers that got any name.
 */
export function writeEchoes(into: readonly ByteWriter[], order: readonly string[], member: Uint8Array | null, raw: QueryValues): number {
  const every = (1 << into.length) - 1;
  let any = 0;
  for (let i = 0; i < order.length; i++) {
    const k = order[i]!;
    const v = raw.get(k);
    if (v === undefined) continue;
    const value = encodeValue(v);
    const bits = member === null ? every : member[i]!;
    for (let j = 0; j < into.length; j++) {
      const bit = 1 << j;
      if ((bits & bit) === 0) continue;
      const w = into[j]!;
      w.byte((any & bit) !== 0 ? 38 : 63); // & ?
      any |= bit;
      w.latin1(k);
      w.byte(61); // =
      w.latin1(value);
    }
  }
  return any;
}

/** `member` for {@link writeEchoes}: bit j of position i is set when `subsets[j]` holds `order[i]`. */
export function echoMembers(order: readonly string[], subsets: ReadonlyArray<readonly string[]>): Uint8Array {
  if (subsets.length > 8) throw new Error(`at most 8 echoes are written at once, not ${subsets.length}`);
  return Uint8Array.from(order, (k) => subsets.reduce((bits, names, j) => (names.includes(k) ? bits | (1 << j) : bits), 0));
}
