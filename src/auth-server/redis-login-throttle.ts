/**
 * @module The log-in and sign-up throttle (login-throttle.ts) with its counters in Redis, so that N
 * instances behind a load balancer grant an attacker the figures of ONE, not N times them: the same
 * policies, the same decisions, the same attempt interface.
 *
 * Per throttled key (table + account or address) two Redis keys under `prefix` (default
 * `hpd:throttle:`):
 * - `<table>:<key>` hash { failures, last (ms), blocked (ms) }, expiring `windowMs` after the last
 *   failure, which is when the in-memory table forgets failures too;
 * - `<table>:<key>:inflight` sorted set of reserved attempt ids scored by start time. A set rather
 *   than a counter because an instance that dies between reserving and settling would otherwise
 *   leave the key blocked for good; reservations older than RESERVATION_TTL_MS are dropped.
 *
 * Reserving (check every key, then reserve all or none) and settling are one Lua script each, so two
 * instances cannot both take the last free attempt. Settling is sent without waiting for it (the
 * attempt interface is synchronous); commands on one connection run in order, so this instance's next
 * reservation always sees it, and another instance's reservation meanwhile is still counted as in
 * flight. Differences from the in-memory table: no LRU bound (Redis expiry bounds memory by one
 * window of traffic), and a success clears the account's failures but not other attempts in flight.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { addressKey, allowedAttempt, POLICIES, type AttemptThrottle, type ThrottlePolicy, type ThrottleResult } from './login-throttle.ts';

export const DEFAULT_THROTTLE_PREFIX = 'hpd:throttle:';

/** A reservation not settled within this long is assumed lost with its instance. */
export const RESERVATION_TTL_MS = 60_000;

const RESERVE = `
local now, id, stale = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local n = #KEYS / 2
local wait = 0
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local free, window = tonumber(ARGV[2 + 2 * i]), tonumber(ARGV[3 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now - stale)
  local f = redis.call('HMGET', h, 'failures', 'last', 'blocked')
  local failures, last, blocked = tonumber(f[1]) or 0, tonumber(f[2]) or 0, tonumber(f[3]) or 0
  if failures > 0 and now - last >= window then failures = 0; blocked = 0 end
  local inflight = redis.call('ZCARD', z)
  local ok = (failures + inflight < free) or (failures >= free and inflight == 0 and now >= blocked)
  if not ok then wait = math.max(wait, math.ceil(math.max(blocked - now, 1000) / 1000)) end
end
if wait > 0 then return wait end
for i = 1, n do
  redis.call('ZADD', KEYS[2 * i], now, id)
  redis.call('PEXPIRE', KEYS[2 * i], stale)
end
return 0
`;

const SETTLE = `
local now, id = tonumber(ARGV[1]), ARGV[2]
for i = 1, #KEYS / 2 do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local o = 2 + (i - 1) * 5
  local outcome, free, base, cap, window = ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), tonumber(ARGV[o + 5])
  redis.call('ZREM', z, id)
  if outcome == 'reset' then
    redis.call('DEL', h)
  elseif outcome == 'failed' then
    local f = redis.call('HMGET', h, 'failures', 'last', 'blocked')
    local failures, last, blocked = tonumber(f[1]) or 0, tonumber(f[2]) or 0, tonumber(f[3]) or 0
    if failures > 0 and now - last >= window then failures = 0; blocked = 0 end
    failures = failures + 1
    local beyond = failures - free
    if beyond >= 0 then blocked = now + math.min(base * 2 ^ math.min(beyond, 40), cap) end
    redis.call('HSET', h, 'failures', failures, 'last', now, 'blocked', string.format('%.0f', blocked))
    redis.call('PEXPIRE', h, window)
  end
end
return 1
`;

export interface RedisLoginThrottleOptions {
  prefix?: string;
  /** Milliseconds since the epoch; injectable for tests. */
  clock?: () => number;
  /** Where a failed settle is reported (the attempt interface cannot throw it); default stderr. */
  onError?: (err: unknown) => void;
}

/** LoginThrottle's figures and interface, shared by every instance using the same Redis and prefix. */
export class RedisLoginThrottle implements AttemptThrottle {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #clock: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(redis: Redis, opts: RedisLoginThrottleOptions = {}) {
    this.#redis = redis;
    this.#prefix = opts.prefix ?? DEFAULT_THROTTLE_PREFIX;
    this.#clock = opts.clock ?? Date.now;
    this.#onError = opts.onError ?? ((err) => process.stderr.write(`login throttle: ${String(err)}\n`));
  }

  login(normalizedEmail: string, address: string | undefined): Promise<ThrottleResult> {
    return this.#reserve(
      [
        ['account', POLICIES.account, normalizedEmail],
        ['address', POLICIES.address, addressKey(address)],
      ],
      true,
    );
  }

  signup(address: string | undefined): Promise<ThrottleResult> {
    return this.#reserve([['signup', POLICIES.signup, addressKey(address)]], false);
  }

  /** Resolves once every attempt settled so far is recorded in Redis (for tests and shutdown). */
  async settled(): Promise<void> {
    await Promise.all(this.#pending);
  }

  async #reserve(
    entries: ReadonlyArray<readonly [table: string, policy: ThrottlePolicy, key: string]>,
    successClearsFirstKey: boolean,
  ): Promise<ThrottleResult> {
    const keys = entries.flatMap(([table, , key]) => [`${this.#prefix}${table}:${key}`, `${this.#prefix}${table}:${key}:inflight`]);
    const id = randomBytes(12).toString('base64url');
    const policyArgs = entries.flatMap(([, p]) => [p.freeFailures, p.windowMs]);
    const wait = Number(await this.#redis.eval(RESERVE, keys.length, ...keys, this.#clock(), id, RESERVATION_TTL_MS, ...policyArgs));
    if (wait > 0) return { allowed: false, retryAfterSeconds: wait };
    return allowedAttempt(successClearsFirstKey, (outcomeFor) => {
      const args = entries.flatMap(([, p], i) => [outcomeFor(i), p.freeFailures, p.baseDelayMs, p.maxDelayMs, p.windowMs]);
      const sent: Promise<unknown> = this.#redis.eval(SETTLE, keys.length, ...keys, this.#clock(), id, ...args).catch(this.#onError);
      this.#pending.add(sent);
      void sent.finally(() => this.#pending.delete(sent));
    });
  }
}
