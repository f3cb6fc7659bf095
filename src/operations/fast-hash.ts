/**
 * @module A fast non-cryptographic hash for values recomputed on every request (ETags, cursor
 * fingerprints). They only need to change when their input changes; a SHA-1 or SHA-256 per request
 * cost several microseconds on the hot path for a guarantee nobody relies on (a cursor is not a
 * credential: forging one only pages through data the caller may read anyway).
 */

/**
 * 64 bits of FNV-1a over UTF-16 code units (two independent 32-bit lanes), as 13 base-36 characters.
 * @example fastHash('searchPlans?age=40') === fastHash('searchPlans?age=40')
 */
export function fastHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193 + 0x3c6ef372) ^ (b >>> 15);
  }
  return base36(a >>> 0) + base36(b >>> 0);
}

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A 32-bit unsigned value as 7 base-36 digits, as `n.toString(36).padStart(7, '0')` writes it; that
 * built-in goes through a generic double-to-radix conversion (an fmod per digit) that showed up in
 * request profiles.
 */
function base36(n: number): string {
  let out = '';
  for (let i = 0; i < 7; i++) {
    const q = Math.floor(n / 36);
    out = DIGITS[n - q * 36]! + out;
    n = q;
  }
  return out;
}
