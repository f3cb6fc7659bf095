/**
 * @module A fast non-cryptographic hash for values recomputed on every request (ETags, cursor
 * fingerprints). They only need to change when their input changes; a SHA-1 or SHA-256 per request
 * cost several microseconds on the hot path for a guarantee nobody relies on (a cursor is not a
 * credential: forging one only pages through data the caller may read anyway).
 *
 * The hash is fed as a stream ({@link HashStream}): a request's canonical text and a cursor's
 * fingerprint are hashed from their parts, so the texts themselves are never built on the hot path.
 */
import type { ByteWriter } from './byte-writer.ts';

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** The 14 characters of a digest, written before the one string made of them. */
const OUT = Buffer.alloc(14);

/**
 * 64 bits of FNV-1a over UTF-16 code units (two independent 32-bit lanes). Feeding it the characters of
 * a text, in any number of pieces, gives {@link fastHash} of the whole text.
 */
export class HashStream {
  #a = 0x811c9dc5;
  #b = 0x01000193 ^ 0x5bd1e995;

  reset(): this {
    this.#a = 0x811c9dc5;
    this.#b = 0x01000193 ^ 0x5bd1e995;
    return this;
  }

  char(c: number): void {
    this.#a = Math.imul(this.#a ^ c, 0x01000193);
    this.#b = Math.imul(this.#b ^ c, 0x01000193 + 0x3c6ef372) ^ (this.#b >>> 15);
  }

  text(s: string): void {
    // The lanes in locals for the loop: through the fields, each character cost a load and a store of
    // both (~30 % of the time of a request's hashing).
    let a = this.#a;
    let b = this.#b;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193 + 0x3c6ef372) ^ (b >>> 15);
    }
    this.#a = a;
    this.#b = b;
  }

  /**
   * Continues the stream whose lanes were `laneA` and `laneB` ({@link laneA}, {@link laneB}): a prefix
   * that recurs (a build's hash) is fed once and its lanes kept.
   */
  resume(laneA: number, laneB: number): this {
    this.#a = laneA;
    this.#b = laneB;
    return this;
  }

  /** The characters of `String(n)`, without making that string for the common case (a safe non-negative integer). */
  number(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      this.text(String(n));
      return;
    }
    let scale = 1;
    while (scale * 10 <= n) scale *= 10;
    for (; scale >= 1; scale /= 10) {
      const d = Math.floor(n / scale);
      this.char(48 + d);
      n -= d * scale;
    }
  }

  /** The digest as 14 base-36 characters (two lanes of 7, as `n.toString(36).padStart(7, '0')`). */
  digest(): string {
    return digestText(this.laneA, this.laneB);
  }

  /** The characters of {@link digest} written into `w`, with no string made. */
  digestInto(w: ByteWriter): void {
    writeDigest(this.laneA, this.laneB, OUT, 0);
    w.range(OUT, 0, 14);
  }

  /** The two lanes of the digest (unsigned 32-bit), to keep and write out later ({@link writeDigest}). */
  get laneA(): number {
    return this.#a >>> 0;
  }

  get laneB(): number {
    return this.#b >>> 0;
  }
}

/** The 14 characters of the digest whose lanes are `a` and `b`, into `buf` at `at`. */
export function writeDigest(a: number, b: number, buf: Buffer, at: number): void {
  base36(buf, a, at);
  base36(buf, b, at + 7);
}

/** The digest whose lanes are `a` and `b`, as text. */
export function digestText(a: number, b: number): string {
  writeDigest(a, b, OUT, 0);
  return OUT.toString('latin1', 0, 14);
}

/**
 * A 32-bit unsigned value as 7 base-36 digits into `buf` at `at`; the built-in goes through a generic
 * double-to-radix conversion (an fmod per digit) that showed up in request profiles.
 */
function base36(buf: Buffer, n: number, at: number): void {
  for (let i = 6; i >= 0; i--) {
    const q = Math.floor(n / 36);
    buf[at + i] = DIGITS.charCodeAt(n - q * 36);
    n = q;
  }
}

const SHARED = new HashStream();

/** @example fastHash('searchPlans?age=40') === fastHash('searchPlans?age=40') */
export function fastHash(text: string): string {
  SHARED.reset().text(text);
  return SHARED.digest();
}
