/**
 * @module Whether the connection caps of the three listeners fit the process's file descriptor limit.
 *
 * The caps exist so that a flood on one listener cannot take the descriptors the others need; that
 * holds only while their sum (plus what LMDB, logs and the runtime hold) stays below the limit. Node
 * raises the soft limit to the hard one at start, so /proc/self/limits shows what the process has.
 */
import { readFileSync } from 'node:fs';

/** Descriptors besides client connections: LMDB environments, the event loop, pipes, log files. */
export const RESERVED_DESCRIPTORS = 256;

/** The soft "Max open files" of this process, or null where /proc is not available. */
export function openFileLimit(limitsText?: string): number | null {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return null;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(text);
  if (m === null) return null;
  return m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** One line to warn with when the caps do not fit the limit, else null. */
export function fdBudgetWarning(caps: Readonly<Record<string, number>>, limit: number | null): string | null {
  if (limit === null) return null;
  const total = Object.values(caps).reduce((a, b) => a + b, 0) + RESERVED_DESCRIPTORS;
  if (total <= limit) return null;
  const named = Object.entries(caps)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return `hpd: warning: connection caps (${named}) plus ${RESERVED_DESCRIPTORS} reserved exceed the open-file limit ${limit}: a flood on one listener can starve the others; lower the caps or raise the limit (ulimit -n)`;
}
