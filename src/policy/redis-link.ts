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
 *
 * Failover. With a `redis+sentinel://` URL ioredis asks the sentinels for the primary, checks the
 * role of the server it reaches and reconnects through the sentinels whenever the connection drops:
 * every thread follows the promoted replica on its own. ioredis's failoverDetector is left off: it
 * drops the connection at every +switch-master a sentinel publishes, and the sentinels publish theirs
 * over several seconds (as each learns the new primary), so threads already on the new primary were
 * cut off again and again. A primary demoted under a live connection, or a server that fails over
 * behind one address (a managed Redis), answers writes with READONLY instead: that reply counts
 * the link as down exactly like a dropped connection (the outage rules apply, so a write that cannot
 * land is never mistaken for a working store), makes ioredis reconnect (the address may now lead to
 * the new primary), and the link is up again once ROLE answers `master`.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { maskRedisUrl, parseRedisUrl, type RedisTarget } from './redis-url.ts';
import { isCommandTimeout, isReadOnlyReply } from './redis-failure.ts';
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

export interface RedisLinkOptions {
  readonly log?: (line: string) => void;
  readonly clock?: () => number;
  /** Named in the log lines (e.g. "rest worker 1"). */
  readonly name?: string;
}

/** Masks the passwords of a Redis URL (any form, parsed or not) for logs. */
export function redactRedisUrl(url: string): string {
  return maskRedisUrl(url, '***');
}

/**
 * Connects to `url` and waits until Redis answers; throws one readable line when it cannot within
 * `startTimeoutMs` (a server must not start on a store it cannot reach: it knows no keys yet).
 */
export async function connectRedis(url: string, opts: RedisLinkOptions = {}, startTimeoutMs = 5000): Promise<RedisLink> {
  const target = parseRedisUrl(url);
  const shown = redactRedisUrl(url);
  if ('problem' in target) {
    throw new RedisUnreachableError(
      `HPD_REDIS_URL must be a redis://, rediss:// or redis+sentinel:// URL, got "${shown}" (${target.problem})`,
    );
  }
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const clock = opts.clock ?? Date.now;
  const who = opts.name === undefined ? '' : ` (${opts.name})`;
  let closed = false;
  let downAt: number | null = null;
  let connected = true;
  let stalled = false;
  let readOnly = false;
  let held = false;
  // Set once the clients exist; a READONLY reply can only come after that.
  let onReadOnly = (): void => {};
  const { client, subscriber } = await connectClients(target, shown, startTimeoutMs, () => onReadOnly());
  const listeners: Array<(up: boolean) => void> = [];
  const update = (why: string): void => {
    const up = connected && !stalled && !readOnly && !held;
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
  onReadOnly = () => {
    if (readOnly || closed) return;
    readOnly = true;
    update('it answers READONLY: a replica now');
    // Until the server this connection reaches (after ioredis's reconnect) is a primary again.
    void probeUntil(
      async () => ((await client.call('ROLE')) as unknown[])[0] === 'master',
      () => readOnly && !closed,
    ).then((ok) => {
      if (!ok) return;
      readOnly = false;
      update('a primary again');
    });
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
      // Until a PING answers, unless a reconnect ('ready') ended the stall first.
      void probeUntil(
        async () => (await client.ping()) === 'PONG',
        () => stalled && !closed,
      ).then((ok) => {
        if (!ok) return;
        stalled = false;
        update('answering again');
      });
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

/** Asks `check` every STALL_PROBE_MS while `wanted()`; true once it said yes, false when no longer wanted. */
async function probeUntil(check: () => Promise<boolean>, wanted: () => boolean): Promise<boolean> {
  while (wanted()) {
    try {
      if (await check()) return wanted();
    } catch {
      // No answer yet: asked again below.
    }
    await new Promise((resolve) => setTimeout(resolve, STALL_PROBE_MS).unref());
  }
  return false;
}

/** ioredis's connection options for a target: the URL itself, or the sentinels and the master name. */
function targetOptions(target: RedisTarget): { url?: string; options: RedisOptions } {
  if (target.kind === 'server') return { url: target.url, options: {} };
  return {
    options: {
      sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: target.name,
      db: target.db,
      username: target.username,
      password: target.password,
      sentinelUsername: target.sentinelUsername,
      sentinelPassword: target.sentinelPassword,
      sentinelCommandTimeout: COMMAND_TIMEOUT_MS,
      // Keep asking the sentinels while none answers (a restart of all of them): never give up.
      sentinelRetryStrategy: (times: number) => Math.min(1000, 50 * 2 ** Math.min(times, 5)),
    },
  };
}

/** The command and subscriber connections, once both answer; one readable line when they do not. */
async function connectClients(
  target: RedisTarget,
  shown: string,
  startTimeoutMs: number,
  onReadOnly: () => void,
): Promise<{ client: Redis; subscriber: Redis }> {
  const { url, options: where } = targetOptions(target);
  const options: RedisOptions = {
    ...where,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times: number) => Math.min(1000, 50 * 2 ** Math.min(times, 5)),
    // A READONLY reply: the address may lead to the new primary once reconnected (1: reconnect, do
    // not resend; the command already failed and its caller applies the outage rules).
    reconnectOnError: (err) => {
      if (!isReadOnlyReply(err)) return false;
      onReadOnly();
      return 1;
    },
    lazyConnect: true,
  };
  const open = (o: RedisOptions): Redis => (url === undefined ? new Redis(o) : new Redis(url, o));
  const client = open(options);
  // The subscriber queues its SUBSCRIBE until connected and re-subscribes after a reconnect.
  const subscriber = open({ ...options, enableOfflineQueue: true, commandTimeout: undefined, reconnectOnError: null });
  // ioredis reports each failed reconnect as an 'error' event; the state lines say it once, and the
  // start names the last one if Redis never answers.
  let lastError = 'no answer';
  const noted = (err: Error): void => {
    lastError = err.message;
  };
  client.on('error', noted);
  subscriber.on('error', noted);
  // Ready, not merely a first attempt that failed: ioredis keeps retrying, so a start during a
  // failover (the sentinels still naming the dead primary, or an address moving) waits for the new
  // primary instead of failing at the first refused connection.
  const ready = (r: Redis): Promise<void> =>
    new Promise((resolve) => {
      r.once('ready', () => resolve());
      r.connect().catch(() => {});
    });
  let timer: NodeJS.Timeout | undefined;
  const answered = await Promise.race([
    Promise.all([ready(client), ready(subscriber)]).then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), startTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (!answered) {
    client.disconnect();
    subscriber.disconnect();
    throw new RedisUnreachableError(`cannot reach Redis at ${shown} within ${startTimeoutMs / 1000} s: ${lastError}`);
  }
  return { client, subscriber };
}
