/**
 * @module `HPD_REDIS_URL` and `HPD_REDIS_GRACE_SECONDS` (declared in src/config/settings.ts), read the
 * same way by `hpd serve` and by the commands that change state (`hpd keys`, `hpd users`): with a Redis
 * URL set, they all work on the shared store instead of the state directory's.
 */
import { readSetting } from '../config/settings.ts';

export interface RedisConfig {
  /** Absent: the embedded store. */
  readonly url?: string;
  readonly graceMs: number;
}

export function redisConfig(env: NodeJS.ProcessEnv): RedisConfig {
  return { url: readSetting('redisUrl', env), graceMs: Math.round(readSetting('redisGraceSeconds', env) * 1000) };
}
