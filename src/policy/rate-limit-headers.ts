/**
 * @module The rate-limit response headers (docs/compatibility.md#response-headers), shared by the REST and MCP fronts.
 *
 * `RateLimit-Reset` is an absolute Unix timestamp (the reference API's behaviour), not the delta
 * seconds of IETF draft -06 that libraries such as express-rate-limit emit: do not swap this for a
 * library formatter. `Retry-After` carries the delta instead, and only on refusals (429).
 */
import type { QuotaDecision } from './quota.ts';

/**
 * Header name/value pairs for a quota decision, in a fixed order.
 *
 * @example
 * rateLimitHeaders(quota.consume(userId, tier))
 * // [['RateLimit-Limit','100'], ['RateLimit-Remaining','0'], ['RateLimit-Reset','1795219200'], ['Retry-After','31234']]
 */
export function rateLimitHeaders(d: QuotaDecision): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  forEachRateLimitHeader(d, (name, value) => headers.push([name, value]));
  return headers;
}

/** The same headers handed one by one to `emit` (a front writing straight to its response). */
export function forEachRateLimitHeader(d: QuotaDecision, emit: (name: string, value: string) => void): void {
  emit(RATE_LIMIT_HEADER.limit, numberText(d.limit));
  emit(RATE_LIMIT_HEADER.remaining, String(d.remaining));
  emit(RATE_LIMIT_HEADER.reset, numberText(d.resetEpochSeconds));
  if (!d.allowed) emit(RATE_LIMIT_HEADER.retryAfter, String(d.retryAfterSeconds));
}

/** The names, in the order written; the REST front writes the same headers as bytes (rest-writers.ts). */
export const RATE_LIMIT_HEADER = {
  limit: 'RateLimit-Limit',
  remaining: 'RateLimit-Remaining',
  reset: 'RateLimit-Reset',
  retryAfter: 'Retry-After',
} as const;

/**
 * Text of a number that is the same on almost every response (a tier's limit, today's reset time):
 * the reset is a heap number, whose conversion takes the runtime's slow path, so the last few texts
 * are remembered.
 */
const texts = new Map<number, string>();
function numberText(n: number): string {
  let t = texts.get(n);
  if (t === undefined) {
    if (texts.size >= 16) texts.clear();
    texts.set(n, (t = String(n)));
  }
  return t;
}
