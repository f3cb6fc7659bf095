/**
 * @module The request id of a response: the caller's `X-Request-Id` when it is a safe token (1–128
 * characters of `[A-Za-z0-9._:-]`, so it can be logged and echoed without escaping or header
 * injection), else a fresh UUID v4. Keeping the caller's id lets one id follow a request through a
 * gateway or a client's own logs.
 */
import { randomUUID } from 'node:crypto';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `incoming`: the header's value, '' when absent (uWS getHeader). */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
