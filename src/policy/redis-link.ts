/**
 * @module One thread's connection to the shared Redis (`HPD_REDIS_URL`): a command connection and a
 * subscriber connection (a subscribed Redis connection can do nothing else), and the up/down state the
 * store, the quota and `/readyz` read.
 *
 * Commands fail at once while Redis is unreachable (no offline queue, one try, a 1 s timeout): a request
 * must never hang on Redis. ioredis keeps reconnecting in the background (backoff capped at 1 s), and
 * each change of state is logged in one line, never once per request.
 *
 * A Redis that stalls (a long command, a fork on a big dataset, `DEBUG SLEEP`) keeps its connection open,
 * so ioredis still calls it ready: requests then waited for the whole stall, one 1 s timeout after
 * another. A command that times out therefore counts the link as down, exactly as if it had dropped
 * (the outage rules apply: known keys from the last state, quotas counted locally, `/readyz` degraded),
 * until a PING answers again. A stall thus adds at most one command timeout to the requests that meet it.
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
  /** Tells the link how a command failed: a timeout marks Redis stalled (down) until a PING answers. */
  observe(err: unknown): void;
  /**
   * Counts the link as down for a reason only its caller can judge (Redis lost hpd's data), until
   * {@link RedisLink.release}: the outage rules apply meanwhile.
   */
  hold(reason: string): void;
  release(reason: string): void;
  close(): Promise<void>;
}

/** How often a stalled link asks Redis whether it answers again. */
const STALL_PROBE_MS = 250;

/** Whether a command's failure is ioredis's command timeout. */
export function isCommandTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Command timed out';
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
  const { client, subscriber } = await connectClients(url, shown, startTimeoutMs);
  let closed = false;
  let downAt: number | null = null;
  let connected = true;
  let stalled = false;
  let held = false;
  const listeners: Array<(up: boolean) => void> = [];
  const update = (why: string): void => {
    const up = connected && !stalled && !held;
    if (up === (downAt === null)) return;
    downAt = up ? null : clock();
    log(
      up
        ? `hpd: redis at ${shown} reachable again${who}`
        : `hpd: redis at ${shown} unreachable${who} (${why}): serving known keys from the last known state`,
    );
    for (const l of listeners) l(up);
  };
  client.on('ready', () => {
    connected = true;
    stalled = false;
    update('connected');
  });
  client.on('close', () => {
    connected = false;
    update('connection closed');
  });
  /** While stalled: PING until Redis answers, then the link is up again. */
  const probe = async (): Promise<void> => {
    while (stalled && !closed) {
      try {
        await client.ping();
        stalled = false;
        update('answering again');
      } catch {
        await new Promise((resolve) => setTimeout(resolve, STALL_PROBE_MS).unref());
      }
    }
  };
  return {
    client,
    subscriber,
    up: () => downAt === null,
    downSince: () => downAt,
    onChange(listener) {
      listeners.push(listener);
    },
    hold(reason) {
      held = true;
      update(reason);
    },
    release(reason) {
      held = false;
      update(reason);
    },
    observe(err) {
      if (!isCommandTimeout(err) || stalled || !connected || closed) return;
      stalled = true;
      update(`no answer within ${COMMAND_TIMEOUT_MS} ms`);
      void probe();
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

/** The command and subscriber connections, once both answer; one readable line when they do not. */
async function connectClients(url: string, shown: string, startTimeoutMs: number): Promise<{ client: Redis; subscriber: Redis }> {
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
  // ioredis reports each failed reconnect as an 'error' event; the state lines say it once.
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
  return { client, subscriber };
}
