/**
 * @module One thread's connection to the shared Redis (`HPD_REDIS_URL`): a command connection and a
 * subscriber connection (a subscribed Redis connection can do nothing else), and the up/down state the
 * store, the quota and `/readyz` read.
 *
 * Commands fail at once while Redis is unreachable (no offline queue, one try, a 1 s timeout): a request
 * must never hang on Redis. ioredis keeps reconnecting in the background (backoff capped at 1 s), and
 * each change of state is logged in one line, never once per request.
 */
import { Redis } from 'ioredis';
import { RedisUnreachableError } from './redis-unreachable-error.ts';

/** A Redis command that does not answer within this is a failure (the link counts as down). */
export const COMMAND_TIMEOUT_MS = 1000;
/** Key prefix of everything hpd stores in Redis. */
export const REDIS_PREFIX = 'hpd:';

export interface RedisLink {
  /** Commands (and Lua scripts). */
  readonly client: Redis;
  /** Pub/sub only. */
  readonly subscriber: Redis;
  /** Whether the command connection is ready now. */
  up(): boolean;
  /** When the link went down (ms since the epoch), or null while up. */
  downSince(): number | null;
  /** Called on every change of state (after the one-line log). */
  onChange(listener: (up: boolean) => void): void;
  close(): Promise<void>;
}

export interface RedisLinkOptions {
  readonly log?: (line: string) => void;
  readonly clock?: () => number;
  /** Named in the log lines (e.g. "rest worker 1"). */
  readonly name?: string;
}

/** Masks the password of a redis:// URL for logs. */
export function redactRedisUrl(url: string): string {
  const u = URL.parse(url);
  if (u === null) return url;
  if (u.password !== '') u.password = '***';
  return u.toString();
}

/**
 * Connects to `url` and waits until Redis answers; throws one readable line when it cannot within
 * `startTimeoutMs` (a server must not start on a store it cannot reach: it knows no keys yet).
 */
export async function connectRedis(url: string, opts: RedisLinkOptions = {}, startTimeoutMs = 5000): Promise<RedisLink> {
  const parsed = URL.parse(url);
  if (parsed === null || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')) {
    throw new RedisUnreachableError(`HPD_REDIS_URL must be a redis:// or rediss:// URL, got "${url}"`);
  }
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const clock = opts.clock ?? Date.now;
  const who = opts.name === undefined ? '' : ` (${opts.name})`;
  const shown = redactRedisUrl(url);
  const options = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times: number) => Math.min(1000, 50 * 2 ** Math.min(times, 5)),
    lazyConnect: true,
  } as const;
  const client = new Redis(url, options);
  // The subscriber queues its SUBSCRIBE until connected and re-subscribes after a reconnect.
  const subscriber = new Redis(url, { ...options, enableOfflineQueue: true, commandTimeout: undefined });
  // ioredis reports each failed reconnect as an 'error' event; the state lines below say it once.
  client.on('error', () => {});
  subscriber.on('error', () => {});
  try {
    await Promise.race([
      Promise.all([client.connect(), subscriber.connect()]),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no answer')), startTimeoutMs).unref()),
    ]);
  } catch (err) {
    client.disconnect();
    subscriber.disconnect();
    throw new RedisUnreachableError(`cannot reach Redis at ${shown}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let downAt: number | null = null;
  const listeners: Array<(up: boolean) => void> = [];
  const set = (up: boolean): void => {
    if (up === (downAt === null)) return;
    downAt = up ? null : clock();
    log(
      up
        ? `hpd: redis at ${shown} reachable again${who}`
        : `hpd: redis at ${shown} unreachable${who}: serving known keys from the last known state`,
    );
    for (const l of listeners) l(up);
  };
  client.on('ready', () => set(true));
  client.on('close', () => set(false));
  let closed = false;
  return {
    client,
    subscriber,
    up: () => downAt === null,
    downSince: () => downAt,
    onChange(listener) {
      listeners.push(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      listeners.length = 0;
      await Promise.allSettled([client.quit(), subscriber.quit()]);
      client.disconnect();
      subscriber.disconnect();
    },
  };
}
