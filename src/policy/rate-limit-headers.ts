/**
 * @module The rate-limit response headers of contract §1.5, shared by the REST and MCP fronts.
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
  const headers: Array<[string, string]> = [
    ['RateLimit-Limit', String(d.limit)],
    ['RateLimit-Remaining', String(d.remaining)],
    ['RateLimit-Reset', String(d.resetEpochSeconds)],
  ];
  if (!d.allowed) headers.push(['Retry-After', String(d.retryAfterSeconds)]);
  return headers;
}
