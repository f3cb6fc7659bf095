/**
 * @module Amounts in cents written as the bytes of their JSON number, with no string made (page
 * writers, cursors).
 */

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
