/**
 * @module Structured logs: one JSON object per line on standard output (pino), from every thread.
 *
 * The one-line human messages on standard error stay as they are (operators and tests read them); the
 * JSON lines are for log pipelines. Each thread has its own asynchronous destination on fd 1; writes
 * are capped at 4 KiB of whole lines, the size a pipe writes atomically, so lines of several threads
 * never interleave mid-line.
 *
 * Credentials never reach a log: no call logs request headers, and redaction covers the field names
 * that could carry one should a future call pass a whole object.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

/** PIPE_BUF on Linux: a write this large or smaller to a pipe is never split by other writers. */
const ATOMIC_WRITE_BYTES = 4096;

import { LOG_LEVELS, type LogLevel } from './log-levels.ts';

export { LOG_LEVELS, type LogLevel };

export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.authorization',
  'key',
  'apiKey',
  'token',
  'accessToken',
  'refreshToken',
  'password',
  '*.key',
  '*.token',
  '*.password',
];

export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Names the thread in every line ('main', 'rest worker 1'). */
  readonly thread?: string;
  /** Where lines go: a file descriptor (default 1) or a writable stream (tests). */
  readonly destination?: number | NodeJS.WritableStream;
}

export function createLogger(o: LoggerOptions = {}): Logger {
  const dest =
    typeof o.destination === 'object'
      ? o.destination
      : pino.destination({ dest: o.destination ?? 1, sync: false, maxWrite: ATOMIC_WRITE_BYTES });
  return pino(
    {
      level: o.level ?? 'info',
      base: { pid: process.pid, ...(o.thread === undefined ? {} : { thread: o.thread }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    dest,
  );
}

/** Writes what is buffered before the thread or process ends (the destination is asynchronous). */
export function flushLogger(log: Logger): void {
  try {
    log.flush();
  } catch {
    // Nothing was written yet (the destination is still opening): nothing to lose.
  }
}
