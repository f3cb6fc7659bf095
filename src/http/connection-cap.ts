/**
 * @module Counting a listener's open connections against its cap, with one log line per period when
 * the cap refuses connections: a flood must not flood the log too. Shared by the uWS REST front and the
 * node:http listeners (MCP, authorization server), whose caps together stay below the process's file
 * descriptor limit so that a flood on one listener leaves descriptors for the others.
 */
import { InvariantError } from '../invariant.ts';

/** At most one "cap reached" line per listener in this period. */
export const CAP_LOG_INTERVAL_MS = 10_000;

export interface ConnectionCap {
  /** Records a refused connection (and logs, at most once per period). */
  refuse(): void;
}

/** `log`, at most once per {@link CAP_LOG_INTERVAL_MS}: a flood of refusals must not flood the log. */
export function logAtMostPeriodically(log: (line: string) => void): (line: string) => void {
  let lastLog = Number.NEGATIVE_INFINITY;
  return (line) => {
    const now = performance.now();
    if (now - lastLog < CAP_LOG_INTERVAL_MS) return;
    lastLog = now;
    log(line);
  };
}

export function createConnectionCap(
  name: string,
  max: number,
  log: (line: string) => void = (l) => process.stderr.write(l),
): ConnectionCap {
  if (!Number.isSafeInteger(max) || max <= 0)
    throw new InvariantError(`${name}: the connection cap must be a positive integer, got ${max}`);
  const refused = logAtMostPeriodically(log);
  return {
    refuse() {
      refused(`${name}: ${max} connections open: refusing new ones\n`);
    },
  };
}
