/**
 * @module Which state store a process uses, chosen once at start: the embedded LMDB store in the state
 * directory (the default, one instance), or Redis when `HPD_REDIS_URL` is set (several instances
 * behind a load balancer). Everything above the policy layer sees a StateStore either way; the Redis
 * link is exposed for what must share it (the leased quota, the authorization server's storage).
 */
import { join } from 'node:path';
import { openLmdbStateStore } from './lmdb-store.ts';
import type { Quota } from './quota.ts';
import type { RedisLink } from './redis-link.ts';
import type { StateStore } from './state-store.ts';
import type { Tier } from './tiers.ts';

export interface StateBackendConfig {
  readonly stateDir: string;
  /** redis:// URL; absent: the embedded store. */
  readonly redisUrl?: string;
  /** How long known keys are served while Redis is unreachable (default: redis-store.ts DEFAULT_REDIS_GRACE_MS). */
  readonly redisGraceMs?: number;
  /** Named in Redis state log lines (e.g. "rest worker 1"). */
  readonly name?: string;
  readonly log?: (line: string) => void;
  readonly clock?: () => number;
  /**
   * Whether this process records the Redis dataset's epoch in the state directory (redis-epoch.ts):
   * `hpd serve`'s main thread only. CLI commands and REST workers check it and never write it.
   */
  readonly recordEpoch?: boolean;
}

export interface StateBackend {
  readonly store: StateStore;
  /** The Redis link when the store is on Redis. */
  readonly redis: RedisLink | null;
  /** On Redis: this thread's lease holder of the daily quota (leased-quota.ts); null when embedded. */
  leasedQuota(limits: Readonly<Record<Tier, number>>, clock?: () => number): Quota | null;
  /** Closes the store, then the link. */
  close(): Promise<void>;
}

export async function openStateBackend(c: StateBackendConfig): Promise<StateBackend> {
  if (c.redisUrl === undefined || c.redisUrl === '') {
    const store = openLmdbStateStore(c.stateDir);
    return { store, redis: null, leasedQuota: () => null, close: () => store.close() };
  }
  // Loaded only here: an instance on the embedded store (and each of its REST workers) never loads
  // the Redis client.
  const [{ connectRedis }, { openRedisStateStore, REDIS_EPOCH_FILE }, { LeasedQuota }] = await Promise.all([
    import('./redis-link.ts'),
    import('./redis-store.ts'),
    import('./leased-quota.ts'),
  ]);
  const link = await connectRedis(c.redisUrl, { log: c.log, name: c.name, clock: c.clock });
  let store: StateStore;
  try {
    store = await openRedisStateStore(link, {
      graceMs: c.redisGraceMs,
      clock: c.clock,
      epochFile: join(c.stateDir, REDIS_EPOCH_FILE),
      recordEpoch: c.recordEpoch === true,
      log: c.log,
      url: c.redisUrl,
    });
  } catch (err) {
    await link.close();
    throw err;
  }
  return {
    store,
    redis: link,
    leasedQuota: (limits, clock) => new LeasedQuota(link, limits, { clock }),
    async close() {
      await store.close();
      await link.close();
    },
  };
}
