/**
 * @module A growable output buffer that responses are written into as bytes: texts that are ours
 * (ASCII), JSON string literals, whole numbers and cents, and pre-encoded fragments, with no string
 * made on the way. A writer is reused by every response of its thread: what it holds is valid until
 * the next response is written (a pending write copies its bytes first: response-writer.ts).
 */
import { needsEscape } from './json-string.ts';
import { writeCents } from './cents-text.ts';

const QUOTE = 34;
/**
 * Texts up to this long are copied by a loop over their code units: Buffer#write is a call into C++
 * (~100 ns on a slow core whatever the length), and most texts of a page (echoed values, ZIPs, names
 * of states and counties) are a few characters.
 */
const SHORT = 32;
/** {@link ByteWriter.exactView}'s default bound on the lengths it keeps a view of. */
const MAX_VIEWS = 16_384;
const B64URL = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');

/** A text of ours encoded once (the fixed parts the page writers copy). */
export function latin1Bytes(s: string): Buffer {
  return Buffer.from(s, 'latin1');
}

/** {@link ByteWriter.jsonConstant}'s texts, encoded; shared by the writers of a thread. */
const CONSTANTS = new Map<string, Buffer>();
const MAX_CONSTANTS = 1024;

export class ByteWriter {
  buf: Buffer;
  at = 0;
  /** {@link exactView}'s views of the buffer's start, by length; made on first use. */
  #views: Array<Buffer | undefined> | null = null;
  #viewCount = 0;
  readonly #maxViews: number;

  /** `maxViews`: how many lengths {@link exactView} keeps a view of (then it makes one per call). */
  constructor(size = 1 << 16, maxViews = MAX_VIEWS) {
    this.buf = Buffer.allocUnsafe(size);
    this.#maxViews = maxViews;
  }

  reset(): void {
    this.at = 0;
  }

  /** Room for `n` more bytes (the buffer doubles; what was written is kept). */
  ensure(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
    if (this.#views !== null) {
      this.#views = new Array<Buffer | undefined>(bigger.length + 1);
      this.#viewCount = 0;
    }
  }

  byte(c: number): void {
    this.ensure(1);
    this.buf[this.at++] = c;
  }

  /** A text of one-byte characters (ours: names, numbers, percent-encoded echoes). */
  latin1(s: string): void {
    const n = s.length;
    this.ensure(n);
    if (n > SHORT) {
      this.at += this.buf.write(s, this.at, 'latin1');
      return;
    }
    const buf = this.buf;
    const at = this.at;
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
    this.at = at + n;
  }

  utf8(s: string): void {
    this.ensure(s.length * 3);
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** Bytes `[start, end)` of `b`. */
  range(b: Buffer, start: number, end: number): void {
    this.ensure(end - start);
    this.at += b.copy(this.buf, this.at, start, end);
  }

  /** Bytes `[start, end)` of `src` in base64url without padding, as `toString('base64url')` writes them. */
  base64url(src: Buffer, start: number, end: number): void {
    this.ensure(Math.ceil(((end - start) * 4) / 3));
    const buf = this.buf;
    let at = this.at;
    let i = start;
    for (; i + 2 < end; i += 3) {
      const n = (src[i]! << 16) | (src[i + 1]! << 8) | src[i + 2]!;
      buf[at++] = B64URL[n >> 18]!;
      buf[at++] = B64URL[(n >> 12) & 63]!;
      buf[at++] = B64URL[(n >> 6) & 63]!;
      buf[at++] = B64URL[n & 63]!;
    }
    if (end - i === 1) {
      const n = src[i]! << 16;
      buf[at++] = B64URL[n >> 18]!;
      buf[at++] = B64URL[(n >> 12) & 63]!;
    } else if (end - i === 2) {
      const n = (src[i]! << 16) | (src[i + 1]! << 8);
      buf[at++] = B64URL[n >> 18]!;
      buf[at++] = B64URL[(n >> 12) & 63]!;
      buf[at++] = B64URL[(n >> 6) & 63]!;
    }
    this.at = at;
  }

  /** Bytes `[start, end)` of another writer. */
  copyFrom(other: ByteWriter, start: number, end: number): void {
    this.ensure(end - start);
    this.at += other.buf.copy(this.buf, this.at, start, end);
  }

  /** `s` as JSON.stringify writes a string, quotes included. */
  jsonString(s: string): void {
    if (s.length <= SHORT && this.#plainAscii(s, QUOTE)) return;
    if (needsEscape(s)) {
      this.utf8(JSON.stringify(s));
      return;
    }
    this.ensure(s.length * 3 + 2);
    this.buf[this.at++] = QUOTE;
    this.at += this.buf.write(s, this.at, 'utf8');
    this.buf[this.at++] = QUOTE;
  }

  /**
   * Writes `s` between two `quote` bytes (none when `quote` is -1) when every character is printable
   * ASCII other than quote and backslash (nothing to escape, one byte each); otherwise writes nothing
   * and answers false.
   */
  #plainAscii(s: string, quote: number): boolean {
    const n = s.length;
    const q = quote < 0 ? 0 : 1;
    this.ensure(n + 2 * q);
    const buf = this.buf;
    const at = this.at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 32 || c > 126 || c === QUOTE || c === 92) return false;
      buf[at + q + i] = c;
    }
    if (q === 1) {
      buf[at] = quote;
      buf[at + 1 + n] = quote;
    }
    this.at = at + n + 2 * q;
    return true;
  }

  /**
   * `s` as JSON.stringify writes a string, quotes included, for a text that recurs across responses
   * (a build's data source and freshness): its bytes are made once and copied. At most
   * {@link MAX_CONSTANTS} texts are kept; past that it writes as {@link jsonString}.
   */
  jsonConstant(s: string): void {
    let b = CONSTANTS.get(s);
    if (b === undefined) {
      if (CONSTANTS.size >= MAX_CONSTANTS) {
        this.jsonString(s);
        return;
      }
      CONSTANTS.set(s, (b = Buffer.from(JSON.stringify(s))));
    }
    this.bytes(b);
  }

  /** `s` as JSON.stringify writes it, without the quotes (a part of a longer string). */
  jsonContent(s: string): void {
    if (s.length <= SHORT && this.#plainAscii(s, -1)) return;
    if (needsEscape(s)) this.utf8(JSON.stringify(s).slice(1, -1));
    else this.utf8(s);
  }

  /**
   * A finite number as JSON.stringify (and String) writes it. Whole numbers and two-decimal amounts (the
   * dollars of cents) are written as digits; anything else through String.
   */
  number(x: number): void {
    if (!Number.isFinite(x)) {
      this.latin1('null');
      return;
    }
    if (x < 0) {
      this.byte(45); // -
      x = -x;
    }
    if (Number.isSafeInteger(x)) {
      this.uint(x);
      return;
    }
    const c = Math.round(x * 100);
    if (c / 100 === x && c < 2 ** 31) this.cents(c);
    else this.latin1(String(x));
  }

  /** A non-negative safe integer in decimal, as String(n) writes it. */
  uint(n: number): void {
    let digits = 1;
    for (let d = n; d >= 10; d = Math.floor(d / 10)) digits++;
    this.ensure(digits);
    for (let i = digits - 1; i >= 0; i--) {
      const next = Math.floor(n / 10);
      this.buf[this.at + i] = 48 + n - next * 10;
      n = next;
    }
    this.at += digits;
  }

  /** Whole cents as the JSON number of `cents / 100` (cents-text.ts writeCents). */
  cents(cents: number): void {
    this.ensure(24);
    this.at = writeCents(this.buf, this.at, cents);
  }

  /**
   * A view of what was written, `[0, at)`, valid until this writer is reused. The view of each length is
   * made once and kept, because a response hands uWS such a view and a new one per response was ~100
   * bytes of garbage each time. At most `maxViews` lengths are kept (16,384 by default, ~1.6 MB), so
   * clients that make the responses of a thread take every possible length cannot grow it further:
   * past that, a view is made per call as before.
   */
  exactView(): Buffer {
    const views = (this.#views ??= new Array<Buffer | undefined>(this.buf.length + 1));
    const n = this.at;
    const v = views[n];
    if (v !== undefined) return v;
    const made = this.buf.subarray(0, n);
    if (this.#viewCount < this.#maxViews) {
      views[n] = made;
      this.#viewCount++;
    }
    return made;
  }

  /** A view of `[start, end)`: valid until this writer is reused. */
  view(start = 0, end = this.at): Buffer {
    return this.buf.subarray(start, end);
  }
}
