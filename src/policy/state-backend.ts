/**
 * @module Which state store a process uses, chosen once at start: the embedded LMDB store in the state
 * directory (the default, one instance), or Redis when `HPD_REDIS_URL` is set (several instances
 * behind a load balancer). Everything above the policy layer sees a StateStore either way; the Redis
 * link is exposed for what must share it (the leased quota, the authorization server's storage).
 */
import { openLmdbStateStore } from './lmdb-store.ts';
import { connectRedis, type RedisLink } from './redis-link.ts';
import { DEFAULT_GRACE_MS, openRedisStateStore } from './redis-store.ts';
import type { StateStore } from './state-store.ts';

export interface StateBackendConfig {
  readonly stateDir: string;
  /** redis:// URL; absent: the embedded store. */
  readonly redisUrl?: string;
  /** How long known keys are served while Redis is unreachable (default 5 min). */
  readonly redisGraceMs?: number;
  /** Named in Redis state log lines (e.g. "rest worker 1"). */
  readonly name?: string;
  readonly log?: (line: string) => void;
  readonly clock?: () => number;
}

export interface StateBackend {
  readonly store: StateStore;
  /** The Redis link when the store is on Redis. */
  readonly redis: RedisLink | null;
  /** Closes the store, then the link. */
  close(): Promise<void>;
}

export { DEFAULT_GRACE_MS as DEFAULT_REDIS_GRACE_MS };

export async function openStateBackend(c: StateBackendConfig): Promise<StateBackend> {
  if (c.redisUrl === undefined || c.redisUrl === '') {
    const store = openLmdbStateStore(c.stateDir);
    return { store, redis: null, close: () => store.close() };
  }
  const link = await connectRedis(c.redisUrl, { log: c.log, name: c.name, clock: c.clock });
  let store: StateStore;
  try {
    store = await openRedisStateStore(link, { graceMs: c.redisGraceMs, clock: c.clock });
  } catch (err) {
    await link.close();
    throw err;
  }
  return {
    store,
    redis: link,
    async close() {
      await store.close();
      await link.close();
    },
  };
}
