/**
 * @module `HPD_REDIS_URL` and `HPD_REDIS_GRACE_SECONDS`, read the same way by `hpd serve` and by the
 * commands that change state (`hpd keys`, `hpd users`): with a Redis URL set, they all work on the
 * shared store instead of the state directory's.
 */
import { DEFAULT_REDIS_GRACE_MS } from '../policy/state-backend.ts';
import { UsageError } from './usage-error.ts';

export interface RedisConfig {
  /** Absent: the embedded store. */
  readonly url?: string;
  readonly graceMs: number;
}

export function redisConfig(env: NodeJS.ProcessEnv): RedisConfig {
  const raw = env.HPD_REDIS_URL?.trim();
  let url: string | undefined;
  if (raw !== undefined && raw !== '') {
    const u = URL.parse(raw);
    if (u === null || (u.protocol !== 'redis:' && u.protocol !== 'rediss:') || u.hostname === '') {
      throw new UsageError(`HPD_REDIS_URL must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0, got "${raw}"`);
    }
    url = raw;
  }
  const graceSeconds = Number(env.HPD_REDIS_GRACE_SECONDS ?? DEFAULT_REDIS_GRACE_MS / 1000);
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0 || graceSeconds > 86_400) {
    throw new UsageError(`HPD_REDIS_GRACE_SECONDS must be a number of seconds from 0 to 86400, got "${env.HPD_REDIS_GRACE_SECONDS}"`);
  }
  return { url, graceMs: Math.round(graceSeconds * 1000) };
}
