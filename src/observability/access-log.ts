/**
 * @module The access log: one JSON line per request answered, for all of them, a sample, or none
 * (`HPD_ACCESS_LOG` = off | full | a rate in (0, 1]). Off by default: at full rate it costs a share of
 * the search throughput (README, "Metrics and logs").
 *
 * A line holds the request id, method, route template, path, status and duration, and the caller's
 * tier; never the query string (a client may put anything there), a header or a credential.
 */
import type { Logger } from './logger.ts';

/** 0: off; 1: every request; between: that share of requests, chosen at random. */
export type AccessLogRate = number;

export interface AccessEntry {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly path: string;
  readonly status: number;
  readonly seconds: number;
  readonly tier?: string;
}

export interface AccessLog {
  /** Whether this request is to be logged (decide before building the entry: most are not). */
  sampled(): boolean;
  write(e: AccessEntry): void;
}

export function createAccessLog(log: Logger, rate: AccessLogRate): AccessLog | undefined {
  if (rate <= 0) return undefined;
  const child = log.child({ log: 'access' });
  return {
    sampled: rate >= 1 ? () => true : () => Math.random() < rate,
    write(e) {
      child.info({
        reqId: e.requestId,
        method: e.method,
        route: e.route,
        path: e.path,
        status: e.status,
        ms: Math.round(e.seconds * 1e6) / 1e3,
        tier: e.tier,
      });
    },
  };
}
