/**
 * @module The registration limit (registration-limit.ts) with its buckets in Redis, so that the
 * server-wide {@link ALL_REGISTRATIONS_PER_HOUR} and each address's {@link REGISTRATIONS_PER_HOUR} hold
 * for all instances together, not once per instance behind the balancer.
 *
 * Keys under `prefix` (default `hpd:throttle:registration:`): `all` and `address:<address>`, each a
 * hash { tokens, at (ms) } expiring an hour after its last use (a bucket untouched for an hour is full,
 * which is what a missing key means). One Lua script checks the address's bucket, then the server's,
 * and takes one from both or from neither, so two instances cannot both take the last registration. A
 * key is written only when a registration is allowed, so rotating addresses past the server's limit
 * stores nothing: at most ALL_REGISTRATIONS_PER_HOUR address keys exist.
 */
import type { Redis } from 'ioredis';
import { ALL_REGISTRATIONS_PER_HOUR, REGISTRATIONS_PER_HOUR, type RegistrationLimit } from './registration-limit.ts';

export const DEFAULT_REGISTRATION_PREFIX = 'hpd:throttle:registration:';

const HOUR_MS = 3_600_000;

/**
 * KEYS[1] the address's bucket, KEYS[2] the server's. ARGV: now (ms), per-address rate, server rate, hour (ms).
 * Returns {0} when allowed, else {1 = address | 2 = server, seconds to wait}.
 */
const TAKE = `
local now, hour = tonumber(ARGV[1]), tonumber(ARGV[4])
local function level(key, rate)
  local f = redis.call('HMGET', key, 'tokens', 'at')
  local tokens, at = tonumber(f[1]), tonumber(f[2])
  if tokens == nil or at == nil then return rate end
  return math.min(rate, tokens + math.max(now - at, 0) * rate / hour)
end
local function wait(tokens, rate) return math.ceil((1 - tokens) * hour / rate / 1000) end
local perAddress, perServer = tonumber(ARGV[2]), tonumber(ARGV[3])
local a = level(KEYS[1], perAddress)
if a < 1 then return {1, wait(a, perAddress)} end
local s = level(KEYS[2], perServer)
if s < 1 then return {2, wait(s, perServer)} end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', a - 1), 'at', ARGV[1])
redis.call('PEXPIRE', KEYS[1], hour)
redis.call('HSET', KEYS[2], 'tokens', string.format('%.17g', s - 1), 'at', ARGV[1])
redis.call('PEXPIRE', KEYS[2], hour)
return {0}
`;

export function createRedisRegistrationLimit(
  redis: Redis,
  opts: { clock?: () => number; prefix?: string; perHour?: number; allPerHour?: number } = {},
): RegistrationLimit {
  const clock = opts.clock ?? Date.now;
  const prefix = opts.prefix ?? DEFAULT_REGISTRATION_PREFIX;
  const perHour = opts.perHour ?? REGISTRATIONS_PER_HOUR;
  const allPerHour = opts.allPerHour ?? ALL_REGISTRATIONS_PER_HOUR;
  return {
    async take(address) {
      const keys = [`${prefix}address:${address}`, `${prefix}all`];
      const [code, wait] = (await redis.eval(TAKE, 2, ...keys, clock(), perHour, allPerHour, HOUR_MS)) as [number, number?];
      if (code === 0) return null;
      return { scope: code === 1 ? 'address' : 'server', wait: Number(wait) };
    },
  };
}
