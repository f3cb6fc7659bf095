/**
 * @module The daily quota across instances sharing a Redis: each thread that serves requests (an
 * instance's main thread, each REST worker) leases blocks of a user's daily allowance with one atomic
 * script call and counts them down locally, so a request waits on Redis only when its thread has no
 * allowance left for that user.
 *
 * Exactness: the sum over instances of successful requests never exceeds the limit, since
 * every success spends a unit leased from the Redis counter, which never grants past the limit. A
 * refusal happens only when Redis has nothing left to grant while other threads still hold unused
 * units, so no request is refused while the sum is below the limit minus what the others hold. Each
 * thread holds at most `slack / threads` units per user (slack = 0.5 % of the limit, 0 under 1,000;
 * threads = lease holders that announced themselves in the last 10 s), so what is held never exceeds
 * the slack. Under a limit of 1,000 (Free) nothing is held: a thread leases exactly what its waiting
 * requests need — those requests wait on one round trip each batch, which is what exactness costs.
 *
 * Units leased and not used when a thread closes are given back. A thread killed with units in hand
 * loses them (counted as used: the error is on the side of the limit). Counters expire two days after
 * their day.
 *
 * Redis unreachable (down, stalled, read-only, or between primaries during a failover): threads keep
 * counting locally for as long as the state store's grace lets known keys in (redis-store.ts), and add
 * what they counted to Redis as soon as the link is up again — to whichever primary it reaches then.
 *
 * Exactness across an outage. Each thread knows H, the holders that announced themselves (every
 * lease and every heartbeat answer it), and, per user it served in the last 10 s, L_i: the count of
 * the whole day as Redis last told it (every lease answer, and every HEARTBEAT_MS a refresh of up to
 * MAX_REFRESHED of those users, the closest to their limit first). Offline, a thread spends first
 * what it holds (already counted in Redis), then at most its share, floor((limit − L_i) / H). With L
 * the count when Redis became unreachable, the requests let through beyond the limit are at most
 * Σ_i (limit − L_i) / H − (limit − L) ≤ Σ_i (L − L_i) / H, and as the threads serving the user are
 * among the H holders, ≤ max_i (L − L_i): what was granted since the oldest of those answers. That is
 * at most what everyone leases in HEARTBEAT_MS, and under steady load a block per holder (the slack,
 * 0.5 % of the limit), since a thread leases again whenever it has spent half of its block. Two more
 * terms: right after the link is back, a lease of another thread may be served before this one has
 * added its offline count (at most one block a holder: the slack again); and what the old primary
 * granted that asynchronous replication had not brought to the promoted replica (the figure
 * test/cluster/sentinel-failover.test.ts measures). A thread that had no answer about a user since
 * the day began takes L_i = 0: its share is limit / H.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DAY_MS, quotaDecision, type Quota, type QuotaDecision } from './quota.ts';
import { REDIS_PREFIX, type RedisLink } from './redis-link.ts';
import { quotaKey } from './redis-store.ts';
import type { Tier } from './tiers.ts';

const HOLDERS = `${REDIS_PREFIX}quota-holders`;
/** A holder that has not announced itself for this long no longer counts when blocks are sized. */
const HOLDER_TTL_MS = 10_000;
/** How often a holder announces itself and refreshes the day's count of the users it served lately. */
const HEARTBEAT_MS = 500;
/** At most this many users' counts are refreshed by a heartbeat (one script call, one HGET each). */
const MAX_REFRESHED = 256;
const COUNTER_TTL_S = 2 * 86_400;
/** A refusal is remembered this long (per user and limit) before Redis is asked again. */
const REFUSAL_MS = 1_000;

/**
 * KEYS: quota hash of the day, holders. ARGV: user, limit, wanted now, now ms, holder id, held now.
 * Grants max(wanted, slack / holders − held) units, never past the limit. Returns { granted, leased
 * that day by everyone, block }.
 */
const LEASE = `
local now = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now, ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ${HOLDER_TTL_MS})
local holders = math.max(1, redis.call('ZCARD', KEYS[2]))
local limit = tonumber(ARGV[2])
local slack = 0
if limit >= 1000 then slack = math.floor(limit * 5 / 1000) end
local block = math.floor(slack / holders)
local want = math.max(tonumber(ARGV[3]), block - tonumber(ARGV[6]))
local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local grant = math.max(0, math.min(want, limit - used))
if grant > 0 then used = redis.call('HINCRBY', KEYS[1], ARGV[1], grant) end
redis.call('EXPIRE', KEYS[1], ${COUNTER_TTL_S})
return { grant, used, block, holders }
`;

/**
 * KEYS: holders, quota hash of the day. ARGV: now ms, holder id, then user ids. Announces the holder;
 * returns { holders, the day's count of each user (false when none) }.
 */
const HEARTBEAT = `
local now = tonumber(ARGV[1])
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${HOLDER_TTL_MS})
local out = { redis.call('ZCARD', KEYS[1]) }
for i = 3, #ARGV do out[#out + 1] = redis.call('HGET', KEYS[2], ARGV[i]) end
return out
`;

/** KEYS: quota hash. ARGV: user, delta (negative: give back, never below 0). */
const ADD = `
local v = redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
if v < 0 then redis.call('HSET', KEYS[1], ARGV[1], 0) end
redis.call('EXPIRE', KEYS[1], ${COUNTER_TTL_S})
return v
`;

interface UserLease {
  readonly id: string;
  /** Units leased and not used yet. */
  left: number;
  /** Units leased that day by every holder, as of the last answer from Redis. */
  leased: number;
  /** When this thread last counted a request of the user (ms): the heartbeat refreshes `leased` of recent ones. */
  lastUsed: number;
  /** The user's limit at that request. */
  limit: number;
  /** The last block size Redis computed (prefetch when half of it is spent). */
  block: number;
  /** Requests waiting for the lease in flight. */
  waiters: number;
  /** The lease in flight; resolves false when Redis did not answer it. */
  pending: Promise<boolean> | null;
  /** Refused by Redis until this time, at this limit. */
  refusedUntil: number;
  refusedLimit: number;
}

export interface LeasedQuotaOptions {
  readonly clock?: () => number;
  /** Called when giving back or reconciling fails (the counts are kept and retried). */
  readonly onError?: (err: unknown) => void;
}

export class LeasedQuota implements Quota {
  readonly #link: RedisLink;
  readonly #redis: Redis;
  readonly #limits: Readonly<Record<Tier, number>>;

  get limits(): Readonly<Record<Tier, number>> {
    return this.#limits;
  }
  readonly #clock: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #holder = `h_${randomBytes(8).toString('hex')}`;
  #dayStart = 0;
  #dayName = '';
  #users = new Map<string, UserLease>();
  /** Lease holders that announced themselves, as Redis last said (offline shares are 1/holders). */
  #holders = 1;
  /** Requests let through while Redis was unreachable, per day and user, not yet added to Redis. */
  readonly #offline = new Map<string, Map<string, number>>();
  readonly #heartbeat: NodeJS.Timeout;
  /** Flushes run one after another: two at once would add the same counts twice. */
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(link: RedisLink, limits: Readonly<Record<Tier, number>>, opts: LeasedQuotaOptions = {}) {
    this.#link = link;
    this.#redis = link.client;
    this.#limits = limits;
    this.#clock = opts.clock ?? Date.now;
    this.#onError =
      opts.onError ?? ((err) => process.emitWarning(`quota: ${err instanceof Error ? err.message : String(err)}`, 'HpdPolicyWarning'));
    this.#roll(this.#clock());
    // Announced at once and then regularly, so every holder's blocks are sized for all of them.
    const announce = (): void => {
      if (!this.#link.up()) return;
      this.#heartbeatOnce().catch((err: unknown) => this.#link.observe(err));
      // Counted locally while the link stayed up (a lease Redis failed): added at the next beat.
      if (this.#offline.size > 0) this.flush().catch(this.#onError);
    };
    announce();
    this.#heartbeat = setInterval(announce, HEARTBEAT_MS);
    this.#heartbeat.unref();
    link.onChange((up) => {
      if (up) this.flush().catch(this.#onError);
    });
  }

  async #heartbeatOnce(): Promise<void> {
    const now = this.#clock();
    this.#roll(now);
    const day = this.#dayName;
    // Those closest to their limit first: far from it, a stale count cannot take a user past it.
    const recent = [...this.#users.values()]
      .filter((u) => now - u.lastUsed < HOLDER_TTL_MS)
      .sort((a, b) => (a.limit - a.leased) / a.limit - (b.limit - b.leased) / b.limit)
      .slice(0, MAX_REFRESHED);
    const reply = (await this.#redis.eval(HEARTBEAT, 2, HOLDERS, quotaKey(day), now, this.#holder, ...recent.map((u) => u.id))) as Array<
      number | string | null
    >;
    this.#holders = Math.max(1, Number(reply[0]));
    if (day !== this.#dayName) return;
    recent.forEach((u, i) => {
      const count = Number(reply[i + 1] ?? 0);
      if (count > u.leased) u.leased = count;
    });
  }

  #roll(now: number): void {
    if (now >= this.#dayStart && now < this.#dayStart + DAY_MS) return;
    this.#dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    this.#dayName = new Date(this.#dayStart).toISOString().slice(0, 10);
    this.#users = new Map();
  }

  #user(userId: string): UserLease {
    let u = this.#users.get(userId);
    if (u === undefined) {
      u = { id: userId, left: 0, leased: 0, lastUsed: 0, limit: 0, block: 0, waiters: 0, pending: null, refusedUntil: 0, refusedLimit: -1 };
      this.#users.set(userId, u);
    }
    return u;
  }

  #decide(allowed: boolean, limit: number, u: UserLease, now: number): QuotaDecision {
    return quotaDecision(allowed, limit, u.leased - u.left + this.#offlineCount(this.#dayName, u), now, this.#dayStart + DAY_MS);
  }

  #offlineCount(day: string, u: UserLease): number {
    return this.#offline.get(day)?.get(u.id) ?? 0;
  }

  consume(userId: string, tier: Tier): QuotaDecision | Promise<QuotaDecision> {
    const now = this.#clock();
    this.#roll(now);
    const limit = this.#limits[tier];
    const u = this.#user(userId);
    u.lastUsed = now;
    u.limit = limit;
    if (u.left > 0) {
      u.left -= 1;
      if (u.block > 1 && u.left * 2 <= u.block && u.pending === null && this.#link.up()) this.#startLease(userId, u, limit, 0);
      return this.#decide(true, limit, u, now);
    }
    if (!this.#link.up()) return this.#countOffline(userId, u, limit, now);
    if (u.refusedLimit === limit && now < u.refusedUntil) return this.#decide(false, limit, u, now);
    return this.#waitForLease(userId, u, tier);
  }

  async #waitForLease(userId: string, u: UserLease, tier: Tier): Promise<QuotaDecision> {
    for (;;) {
      const limit = this.#limits[tier];
      const now = this.#clock();
      if (u.left > 0) {
        u.left -= 1;
        return this.#decide(true, limit, u, now);
      }
      if (!this.#link.up()) return this.#countOffline(userId, u, limit, now);
      if (u.refusedLimit === limit && now < u.refusedUntil) return this.#decide(false, limit, u, now);
      const leasing = u.pending ?? this.#startLease(userId, u, limit, u.waiters + 1);
      u.waiters += 1;
      let answered: boolean;
      try {
        answered = await leasing;
      } finally {
        u.waiters -= 1;
      }
      // Redis failed the lease while the link still looks up (a reply such as NOREPLICAS or
      // MASTERDOWN): this request is decided under the outage rules rather than asking again at once.
      if (!answered && u.left === 0) return this.#countOffline(userId, u, this.#limits[tier], this.#clock());
    }
  }

  #startLease(userId: string, u: UserLease, limit: number, wanted: number): Promise<boolean> {
    const day = this.#dayName;
    const leasing = (
      this.#redis.eval(LEASE, 2, quotaKey(day), HOLDERS, userId, limit, wanted, this.#clock(), this.#holder, u.left) as Promise<
        [number, number, number, number]
      >
    )
      .then(([granted, leased, block, holders]) => {
        this.#holders = Math.max(1, Number(holders));
        if (day !== this.#dayName) return true;
        u.left += Number(granted);
        u.leased = Number(leased);
        u.block = Number(block);
        if (Number(granted) === 0 && u.left === 0) {
          u.refusedUntil = this.#clock() + REFUSAL_MS;
          u.refusedLimit = limit;
        }
        return true;
      })
      // Unreachable or stalled (a timeout marks the link down): the waiters see it down and count
      // locally instead of leasing again; a prefetch just did not happen.
      .catch((err: unknown) => {
        this.#link.observe(err);
        return false;
      })
      .finally(() => {
        u.pending = null;
      });
    u.pending = leasing;
    return leasing;
  }

  #countOffline(userId: string, u: UserLease, limit: number, now: number): QuotaDecision {
    const byUser = this.#offline.get(this.#dayName) ?? new Map<string, number>();
    this.#offline.set(this.#dayName, byUser);
    const counted = byUser.get(userId) ?? 0;
    // This thread's share of what was left when Redis last answered (the module note's bound).
    const share = Math.floor(Math.max(0, limit - u.leased) / this.#holders);
    if (counted >= share) return this.#decide(false, limit, u, now);
    byUser.set(userId, counted + 1);
    return this.#decide(true, limit, u, now);
  }

  peek(userId: string, tier: Tier): QuotaDecision {
    const now = this.#clock();
    this.#roll(now);
    const limit = this.#limits[tier];
    const u = this.#user(userId);
    return this.#decide(u.left > 0 || u.leased - u.left + this.#offlineCount(this.#dayName, u) < limit, limit, u, now);
  }

  /**
   * Adds what was counted while Redis was unreachable. Every addition is sent at once, in one pipeline,
   * so it reaches Redis before any lease this thread asks for after the link is back.
   */
  flush(): Promise<void> {
    const run = this.#flushing.then(() => this.#flushOnce());
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async #flushOnce(): Promise<void> {
    if (!this.#link.up()) return;
    const sent: Array<[string, string, number]> = [];
    const p = this.#redis.pipeline();
    for (const [day, byUser] of this.#offline) {
      for (const [userId, n] of byUser) {
        sent.push([day, userId, n]);
        p.eval(ADD, 1, quotaKey(day), userId, n);
      }
    }
    if (sent.length === 0) return;
    const replies = (await p.exec()) ?? [];
    let failure: unknown = null;
    sent.forEach(([day, userId, n], i) => {
      const reply = replies[i];
      const err = reply === undefined ? new Error('no reply') : reply[0];
      if (err !== null) {
        failure ??= err;
        return;
      }
      const byUser = this.#offline.get(day);
      // Counted again meanwhile (the link went down once more): only what was added goes.
      const now = (byUser?.get(userId) ?? 0) - n;
      if (now > 0) byUser!.set(userId, now);
      else byUser?.delete(userId);
      if (byUser?.size === 0) this.#offline.delete(day);
    });
    if (failure !== null) throw failure;
  }

  /** Gives back what this thread leased and did not use, adds what it counted offline, and leaves. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    if (!this.#link.up()) return;
    try {
      await Promise.allSettled([...this.#users.values()].map((u) => u.pending));
      const m = this.#redis.multi();
      for (const [userId, u] of this.#users) if (u.left > 0) m.eval(ADD, 1, quotaKey(this.#dayName), userId, -u.left);
      m.zrem(HOLDERS, this.#holder);
      await m.exec();
      this.#users = new Map();
      await this.flush();
    } catch (err) {
      this.#onError(err);
    }
  }
}
