/**
 * @module The request id of a response: the caller's `X-Request-Id` when it is a safe token (1–128
 * characters of `[A-Za-z0-9._:-]`, so it can be logged and echoed without escaping or header
 * injection), else a fresh UUID v4. Keeping the caller's id lets one id follow a request through a
 * gateway or a client's own logs.
 */
import { randomFillSync } from 'node:crypto';
import type { ByteWriter } from '../encoding/byte-writer.ts';

/** The caller ids kept, as the OpenAPI document declares the header (openapi.ts). */
export const SAFE_REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const SAFE_REQUEST_ID = new RegExp(SAFE_REQUEST_ID_PATTERN);

/** `incoming`: the header's value, '' when absent (uWS getHeader). */
export function requestIdFrom(incoming: string | undefined): string {
  return givenRequestId(incoming) ?? generatedRequestId();
}

/**
 * The caller's id when it is safe, else null after generating a fresh one into this thread's buffer:
 * its text is made only where a string is needed ({@link generatedRequestId}); the hot 200 path writes
 * its bytes ({@link writeGeneratedRequestId}). Valid until the thread's next request.
 */
export function givenRequestId(incoming: string | undefined): string | null {
  if (incoming !== undefined && incoming !== '' && SAFE_REQUEST_ID.test(incoming)) return incoming;
  generateUuid();
  return null;
}

/** The id {@link givenRequestId} last generated, as text. */
export function generatedRequestId(): string {
  return TEXT.toString('latin1', 0, 36);
}

/** The bytes of the id {@link givenRequestId} last generated. */
export function writeGeneratedRequestId(w: ByteWriter): void {
  w.range(TEXT, 0, 36);
}

const HEX = Buffer.from('0123456789abcdef');
/** Random bytes for 256 ids, drawn from the CSPRNG in one call and refilled when used up. */
const POOL = Buffer.alloc(16 * 256);
let next = POOL.length;
const TEXT = Buffer.alloc(36);

/**
 * A random UUID v4 (RFC 9562 §5.4), as crypto.randomUUID makes it, written as text in TEXT (made a
 * string only when one is needed: randomUUID's own string building was ~0.6 KB of garbage per request).
 */
function generateUuid(): void {
  if (next === POOL.length) {
    randomFillSync(POOL);
    next = 0;
  }
  let at = 0;
  for (let i = 0; i < 16; i++) {
    let b = POOL[next + i]!;
    if (i === 6) b = (b & 0x0f) | 0x40; // version 4
    if (i === 8) b = (b & 0x3f) | 0x80; // variant 10
    if (i === 4 || i === 6 || i === 8 || i === 10) TEXT[at++] = 45; // -
    TEXT[at++] = HEX[b >> 4]!;
    TEXT[at++] = HEX[b & 15]!;
  }
  next += 16;
}
