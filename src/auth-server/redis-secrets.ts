/**
 * @module The authorization server's secrets (secrets.ts) in one Redis key, for several instances
 * behind one load balancer: every instance must sign with the same key and publish the same JWKS, or a
 * token minted by one would fail verification against another's `kid`, and a browser's signed session
 * cookie would be rejected by whichever instance it reaches next.
 *
 * Creation is SET NX, so when several instances start together on an empty Redis exactly one value is
 * stored and every instance uses it, whoever generated first. The value is the same JSON document as
 * auth-keys.json and goes through the same validation: a damaged value is an error naming the key,
 * never silently replaced (that would log every user out on every instance).
 *
 * The value holds private keys: protect the Redis as you would the state directory (auth, network).
 */
import type { Redis } from 'ioredis';
import { generateAuthSecrets, parseAuthSecrets, type AuthSecrets } from './secrets.ts';
import { StateError } from '../policy/state-error.ts';

export const DEFAULT_SECRETS_KEY = 'hpd:auth-secrets';

/**
 * Reads the secrets from `key`, creating them on first use. Does not close `redis`.
 *
 * @example const { signingKeys, cookieKeys } = await loadOrCreateRedisAuthSecrets(redis);
 */
export async function loadOrCreateRedisAuthSecrets(redis: Redis, key: string = DEFAULT_SECRETS_KEY): Promise<AuthSecrets> {
  const source = `Redis key "${key}"`;
  const existing = await redis.get(key);
  if (existing !== null) return parseAuthSecrets(existing, source);
  const fresh = await generateAuthSecrets();
  await redis.set(key, JSON.stringify(fresh), 'NX');
  // Read back whether or not our SET won: the loser must use the winner's keys.
  const stored = await redis.get(key);
  if (stored === null) throw new StateError(`${source} vanished right after it was created`);
  return parseAuthSecrets(stored, source);
}
