/**
 * @module The state store on Redis (`HPD_REDIS_URL`), for several instances behind a load balancer:
 * API keys (by SHA-256 only), users and tiers, and the generation that invalidates authentication
 * caches. Quota counters live in Redis too, but are counted by leased-quota.ts.
 *
 * Reads stay synchronous, as the StateStore interface promises the request path: every thread keeps a
 * replica of the keys and users in memory, loaded whole at start and kept current by the change
 * messages every write publishes (`hpd:changes`), with a periodic comparison of the generation as a
 * safety net for messages lost while the subscriber reconnected. A revocation through any instance's
 * CLI reaches every instance within a round trip of the publish, and within CHECK_MS in the worst case.
 *
 * Writes are Lua scripts (one atomic step each, generation included). updateKey/updateUser read the
 * record from Redis, not from the replica, and write it only if it is still what they read
 * (compare-and-set, retried), so a last_used_at touch can never undo a revocation made elsewhere.
 *
 * Layout: `hpd:keys` hash id → JSON, `hpd:keys-by-hash` hash sha256 → id, `hpd:users` hash id → JSON,
 * `hpd:generation` integer, `hpd:quota:<day>` hash user → requests leased that day (leased-quota.ts).
 *
 * While Redis is unreachable the replica keeps answering for `graceMs` (default 5 min): known keys are
 * served, unknown ones get `health()` 'degraded' so the fronts answer 503 rather than 401 (the key may
 * have been created elsewhere during the outage). After the grace, 'unavailable': every request 503.
 *
 * A Redis that comes back empty (restarted without persistence, FLUSHALL) or restored from another
 * dataset is not taken at its word: it would revoke every key at once. The dataset carries an epoch
 * (redis-epoch.ts), created only by `hpd redis init`. A running instance that finds the epoch gone, or
 * another one that no operator command stamped since it joined, keeps its replica, counts the link as
 * down (the outage rules: known keys served, unknown ones 503, quotas counted locally) and reports
 * 'lost' until its epoch is back (Redis restored from its AOF/RDB) or an operator runs `hpd redis init`
 * / `hpd redis adopt`, whose newer stamp it follows at once. A process that starts against such a Redis
 * refuses to start (StateError) with the command to run.
 */
import type { Redis } from 'ioredis';
import { REDIS_PREFIX, redactRedisUrl, type RedisLink } from './redis-link.ts';
import {
  describeEpoch,
  EPOCH_KEY,
  EPOCH_STAMP_KEY,
  judgeEpoch,
  readEpochRecord,
  readRedisEpoch,
  writeEpochRecord,
  type Epoch,
} from './redis-epoch.ts';
import type { ApiKeyRecord, StateStore, StoreHealth, UserRecord } from './state-store.ts';
import { StateError } from './state-error.ts';
import { InvariantError } from '../invariant.ts';

const KEYS = `${REDIS_PREFIX}keys`;
const KEYS_BY_HASH = `${REDIS_PREFIX}keys-by-hash`;
const USERS = `${REDIS_PREFIX}users`;
const GENERATION = `${REDIS_PREFIX}generation`;
export { REDIS_EPOCH_FILE } from './redis-epoch.ts';
export const CHANGES_CHANNEL = `${REDIS_PREFIX}changes`;
/** The quota hash of a UTC day. */
export const quotaKey = (day: string): string => `${REDIS_PREFIX}quota:${day}`;
/** Safety net for lost change messages: the generation is compared this often. */
export const CHECK_MS = 500;
/** Default time known keys are served while Redis is unreachable (HPD_REDIS_GRACE_SECONDS). */
export const DEFAULT_REDIS_GRACE_MS = 5 * 60_000;
const MAX_CAS_TRIES = 20;

/**
 * KEYS: keys, keys-by-hash, generation. ARGV: id, new JSON, new hash, expected JSON ('' = any),
 * bump (1/0), channel. Returns the generation after the write, or -1 when the record changed since read.
 */
const PUT_KEY = `
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[4] ~= '' and previous ~= ARGV[4] then return -1 end
if previous then
  local old = cjson.decode(previous)
  if old.hash ~= ARGV[3] then redis.call('HDEL', KEYS[2], old.hash) end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
if ARGV[5] == '1' then
  local g = redis.call('INCR', KEYS[3])
  redis.call('PUBLISH', ARGV[6], cjson.encode({ g = g, key = ARGV[1] }))
  return g
end
return tonumber(redis.call('GET', KEYS[3]) or '0')
`;

/**
 * KEYS: keys, keys-by-hash, generation. ARGV: id, expected JSON, channel. Deletes the key and its hash
 * entry if the record is still `expected`; returns the generation after, or -1 when it changed since read.
 */
const REMOVE_KEY = `
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if previous ~= ARGV[2] then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], cjson.decode(previous).hash)
local g = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[3], cjson.encode({ g = g, key = ARGV[1] }))
return g
`;

/** KEYS: users, generation. ARGV: id, new JSON, expected JSON ('' = any, '-' = must not exist), bump, channel. */
const PUT_USER = `
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] == '-' then
  if previous then return -1 end
elseif ARGV[3] ~= '' and previous ~= ARGV[3] then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] == '1' then
  local g = redis.call('INCR', KEYS[2])
  redis.call('PUBLISH', ARGV[5], cjson.encode({ g = g, user = ARGV[1] }))
  return g
end
return tonumber(redis.call('GET', KEYS[2]) or '0')
`;

interface Change {
  readonly g: number;
  readonly key?: string;
  readonly user?: string;
}

export interface RedisStoreOptions {
  /** How long the replica answers for known keys while Redis is unreachable (default 5 min). */
  readonly graceMs?: number;
  readonly clock?: () => number;
  /** The state directory's record of the dataset's epoch (redis-epoch.ts); without it: a new host. */
  readonly epochFile?: string;
  /** Whether this process writes that record (`hpd serve`'s main thread only; never a CLI command). */
  readonly recordEpoch?: boolean;
  /** Where the epoch's changes are told (one line each); default stderr. */
  readonly log?: (line: string) => void;
  /** Named in refusals (the URL, password masked). */
  readonly url?: string;
}

class RedisStateStore implements StateStore {
  readonly #link: RedisLink;
  readonly #redis: Redis;
  readonly #graceMs: number;
  readonly #clock: () => number;
  #keys = new Map<string, ApiKeyRecord>();
  #keysByHash = new Map<string, string>();
  #users = new Map<string, UserRecord>();
  #generation = 0;
  readonly #epochFile: string | undefined;
  readonly #recordEpoch: boolean;
  readonly #log: (line: string) => void;
  readonly #where: string;
  /** The epoch of the dataset this replica holds. */
  #epoch: Epoch = { epoch: '', stamp: 0 };
  /** Since when Redis answers without that epoch (ms since the epoch), or null. */
  #lostSince: number | null = null;
  /** Replica updates run one at a time, in order. */
  #syncing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(link: RedisLink, opts: RedisStoreOptions) {
    this.#link = link;
    this.#redis = link.client;
    this.#graceMs = opts.graceMs ?? DEFAULT_REDIS_GRACE_MS;
    this.#clock = opts.clock ?? Date.now;
    this.#epochFile = opts.epochFile;
    this.#recordEpoch = opts.recordEpoch === true && opts.epochFile !== undefined;
    this.#log = opts.log ?? ((line) => void process.stderr.write(`${line}\n`));
    this.#where = opts.url === undefined ? 'Redis' : `Redis at ${redactRedisUrl(opts.url)}`;
  }

  /** Joins Redis's epoch, or adopts one an operator stamped since; refuses anything else (redis-epoch.ts). */
  async #joinEpoch(): Promise<void> {
    const recorded = this.#epochFile === undefined ? undefined : readEpochRecord(this.#epochFile);
    const verdict = judgeEpoch(await readRedisEpoch(this.#redis), recorded);
    const served = recorded === undefined ? '' : ` (${this.#epochFile} records ${describeEpoch(recorded)})`;
    if (verdict.kind === 'none') {
      const held = await this.#redis.hlen(KEYS);
      throw new StateError(
        `${this.#where} has no hpd epoch${served}, holding ${held} API keys: if it lost hpd's data, restore it from its AOF/RDB backup; for a new deployment (or to start over, or to keep data from before epochs) run hpd redis init once`,
      );
    }
    if (verdict.kind === 'other') {
      throw new StateError(
        `${this.#where} holds ${describeEpoch(verdict.epoch)}, not the dataset this instance served${served}: restore Redis from that dataset's backup, or run hpd redis adopt to make every instance accept what Redis holds now`,
      );
    }
    if (verdict.kind === 'adopt' && recorded !== undefined)
      this.#log(`hpd: adopting ${describeEpoch(verdict.epoch)} of ${this.#where}, stamped by an operator since ${describeEpoch(recorded)}`);
    this.#epoch = verdict.epoch;
    this.#record(recorded);
  }

  #record(recorded: Epoch | undefined): void {
    if (!this.#recordEpoch || this.#epochFile === undefined) return;
    if (recorded?.epoch === this.#epoch.epoch && recorded.stamp === this.#epoch.stamp) return;
    writeEpochRecord(this.#epochFile, this.#epoch);
  }

  async start(): Promise<void> {
    await this.#joinEpoch();
    await this.#reloadAll();
    await this.#link.subscriber.subscribe(CHANGES_CHANNEL);
    this.#link.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== CHANGES_CHANNEL) return;
      let change: Change;
      try {
        change = JSON.parse(message) as Change;
      } catch {
        return;
      }
      this.#enqueue(() => this.#apply(change));
    });
    // Back from an outage: whatever changed meanwhile is read again at once (not while the data is lost).
    this.#link.onChange((up) => {
      if (up && this.#lostSince === null) this.#enqueue(() => this.#reloadAll());
    });
    this.#timer = setInterval(() => this.#enqueue(() => this.#check()), CHECK_MS);
    this.#timer.unref();
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.#syncing
      .then(() => (this.#closed ? undefined : step()))
      // Redis unreachable (or stalled: a timeout marks the link down): the periodic check and the
      // reload when it is back catch up later.
      .catch((err: unknown) => this.#link.observe(err));
    this.#syncing = next;
    return next;
  }

  async #check(): Promise<void> {
    if (this.#lostSince === null && !this.#link.up()) return;
    const [epoch, stamp, generation] = await this.#redis.mget(EPOCH_KEY, EPOCH_STAMP_KEY, GENERATION);
    const current: Epoch | null = epoch === null || epoch === undefined ? null : { epoch, stamp: Number(stamp ?? 0) || 0 };
    const verdict = judgeEpoch(current, this.#epoch);
    if (verdict.kind === 'same' && verdict.epoch.stamp !== this.#epoch.stamp) {
      // `hpd redis adopt` of the dataset this replica already holds: only the stamp is new.
      const previous = this.#epoch;
      this.#epoch = verdict.epoch;
      this.#record(previous);
    }
    if (verdict.kind === 'adopt') return this.#adopt(verdict.epoch);
    if (this.#lostSince !== null) {
      // Lost: nothing is read but the epoch, until Redis holds this dataset again (restored from its backup).
      if (verdict.kind !== 'same') return;
      this.#lostSince = null;
      this.#link.release(`its data is back (${describeEpoch(this.#epoch)})`);
      return;
    }
    if (verdict.kind !== 'same') {
      // Taking an emptied or foreign Redis at its word would revoke every key at once: keep the replica.
      this.#lostSince = this.#clock();
      this.#link.hold(
        `it has lost hpd's data: ${current === null ? 'no epoch' : describeEpoch(current)}, this replica holds ${describeEpoch(this.#epoch)}; restore it from its backup, or run hpd redis adopt (or init, to start over)`,
      );
      return;
    }
    if (Number(generation ?? 0) !== this.#generation) await this.#reloadAll();
  }

  /** An operator's init or adopt since this replica's epoch: Redis's dataset is the one to serve now. */
  async #adopt(epoch: Epoch): Promise<void> {
    await this.#reloadAll();
    const previous = this.#epoch;
    this.#epoch = epoch;
    this.#record(previous);
    this.#log(`hpd: adopted ${describeEpoch(epoch)} of ${this.#where} (stamped by an operator after ${describeEpoch(previous)})`);
    if (this.#lostSince !== null) {
      this.#lostSince = null;
      this.#link.release(`an operator stamped ${describeEpoch(epoch)}`);
    }
  }

  /** One change after the replica's generation: fetch that record; anything else: reload all. */
  async #apply(change: Change): Promise<void> {
    if (this.#lostSince !== null || change.g <= this.#generation) return;
    if (change.g !== this.#generation + 1) return this.#reloadAll();
    const m = this.#redis.multi();
    if (change.key !== undefined) m.hget(KEYS, change.key);
    if (change.user !== undefined) m.hget(USERS, change.user);
    m.get(GENERATION);
    const replies = ((await m.exec()) ?? []).map(([err, value]) => {
      if (err !== null) throw err;
      return value as string | null;
    });
    const g = Number(replies.at(-1) ?? 0);
    // Another change committed in between: the two could interleave; read everything instead.
    if (g !== change.g) return this.#reloadAll();
    if (change.key !== undefined) this.#setKey(change.key, replies[0] ?? null);
    if (change.user !== undefined) this.#setUser(change.user, replies[change.key === undefined ? 0 : 1] ?? null);
    this.#generation = g;
  }

  async #reloadAll(): Promise<void> {
    const m = this.#redis.multi().hgetall(KEYS).hgetall(USERS).get(GENERATION);
    const [keys, users, g] = ((await m.exec()) ?? []).map(([err, value]) => {
      if (err !== null) throw err;
      return value;
    }) as [Record<string, string>, Record<string, string>, string | null];
    const nextKeys = new Map<string, ApiKeyRecord>();
    const nextByHash = new Map<string, string>();
    for (const json of Object.values(keys)) {
      const rec = JSON.parse(json) as ApiKeyRecord;
      nextKeys.set(rec.id, rec);
      nextByHash.set(rec.hash, rec.id);
    }
    const nextUsers = new Map<string, UserRecord>();
    for (const json of Object.values(users)) {
      const rec = JSON.parse(json) as UserRecord;
      nextUsers.set(rec.id, rec);
    }
    this.#keys = nextKeys;
    this.#keysByHash = nextByHash;
    this.#users = nextUsers;
    this.#generation = Number(g ?? 0);
  }

  #setKey(id: string, json: string | null): void {
    const previous = this.#keys.get(id);
    if (previous !== undefined) this.#keysByHash.delete(previous.hash);
    if (json === null) {
      this.#keys.delete(id);
      return;
    }
    const rec = JSON.parse(json) as ApiKeyRecord;
    this.#keys.set(id, rec);
    this.#keysByHash.set(rec.hash, id);
  }

  #setUser(id: string, json: string | null): void {
    if (json === null) this.#users.delete(id);
    else this.#users.set(id, JSON.parse(json) as UserRecord);
  }

  /** After this process's own write: the replica shows it before the write resolves. */
  async #caughtUp(g: number, change: Omit<Change, 'g'>): Promise<void> {
    await this.#enqueue(() => this.#apply({ g, ...change }));
  }

  health(): StoreHealth {
    const since = this.#link.downSince();
    if (since === null) return 'ok';
    if (this.#clock() - since >= this.#graceMs) return 'unavailable';
    return this.#lostSince !== null ? 'lost' : 'degraded';
  }

  generation(): number {
    return this.#generation;
  }

  getKeyByHash(hash: string): ApiKeyRecord | undefined {
    const id = this.#keysByHash.get(hash);
    const rec = id === undefined ? undefined : this.#keys.get(id);
    return rec !== undefined && rec.hash === hash ? rec : undefined;
  }

  getKey(id: string): ApiKeyRecord | undefined {
    return this.#keys.get(id);
  }

  async putKey(rec: ApiKeyRecord): Promise<void> {
    const g = (await this.#redis.eval(
      PUT_KEY,
      3,
      KEYS,
      KEYS_BY_HASH,
      GENERATION,
      rec.id,
      JSON.stringify(rec),
      rec.hash,
      '',
      '1',
      CHANGES_CHANNEL,
    )) as number;
    await this.#caughtUp(g, { key: rec.id });
  }

  async updateKey(id: string, update: (current: ApiKeyRecord) => ApiKeyRecord | undefined): Promise<ApiKeyRecord | undefined> {
    return this.#compareAndSet<ApiKeyRecord>(KEYS, id, (current) => {
      if (current === undefined) return { stop: undefined };
      const next = update(current);
      if (next === undefined) return { stop: current };
      if (next.id !== current.id || next.hash !== current.hash)
        throw new InvariantError(`updateKey must not change the id or hash of ${id}`);
      // last_used_at touches do not change authentication; revocations and re-ownership do.
      const bump = next.revoked_at !== current.revoked_at || next.user_id !== current.user_id;
      return {
        next,
        bump,
        write: (json, expected, b) =>
          this.#redis.eval(
            PUT_KEY,
            3,
            KEYS,
            KEYS_BY_HASH,
            GENERATION,
            id,
            json,
            next.hash,
            expected,
            b,
            CHANGES_CHANNEL,
          ) as Promise<number>,
      };
    });
  }

  async removeKey(id: string, when: (current: ApiKeyRecord) => boolean): Promise<ApiKeyRecord | undefined> {
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const json = await this.#redis.hget(KEYS, id);
      if (json === null) return undefined;
      const current = JSON.parse(json) as ApiKeyRecord;
      if (!when(current)) return undefined;
      const g = (await this.#redis.eval(REMOVE_KEY, 3, KEYS, KEYS_BY_HASH, GENERATION, id, json, CHANGES_CHANNEL)) as number;
      if (g < 0) continue;
      await this.#caughtUp(g, { key: id });
      return current;
    }
    throw new StateError(`key ${id} kept changing while it was removed`);
  }

  listKeys(): ApiKeyRecord[] {
    return [...this.#keys.values()];
  }

  getUser(id: string): UserRecord | undefined {
    return this.#users.get(id);
  }

  async putUser(rec: UserRecord): Promise<void> {
    const g = (await this.#redis.eval(PUT_USER, 2, USERS, GENERATION, rec.id, JSON.stringify(rec), '', '1', CHANGES_CHANNEL)) as number;
    await this.#caughtUp(g, { user: rec.id });
  }

  async updateUser(id: string, update: (current: UserRecord | undefined) => UserRecord | undefined): Promise<UserRecord | undefined> {
    return this.#compareAndSet<UserRecord>(USERS, id, (current) => {
      const next = update(current);
      if (next === undefined) return { stop: current };
      if (next.id !== id) throw new InvariantError(`updateUser must not change the id of ${id}`);
      const bump = current === undefined || next.tier !== current.tier;
      // '-': the user must still not exist (an insert).
      return {
        next,
        bump,
        write: (json, expected, b) =>
          this.#redis.eval(
            PUT_USER,
            2,
            USERS,
            GENERATION,
            id,
            json,
            expected === '' ? '-' : expected,
            b,
            CHANGES_CHANNEL,
          ) as Promise<number>,
      };
    });
  }

  /**
   * Read-modify-write of one record of `hash`, retried while another process changes it in between:
   * `step` sees the record as Redis has it now and either stops (with the value to return) or names
   * the next record and the script that writes it only if the record is still `expected`.
   */
  async #compareAndSet<T extends { id: string }>(
    hash: string,
    id: string,
    step: (
      current: T | undefined,
    ) => { stop: T | undefined } | { next: T; bump: boolean; write: (json: string, expected: string, bump: '1' | '0') => Promise<number> },
  ): Promise<T | undefined> {
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const json = await this.#redis.hget(hash, id);
      const s = step(json === null ? undefined : (JSON.parse(json) as T));
      if ('stop' in s) return s.stop;
      const nextJson = JSON.stringify(s.next);
      const g = await s.write(nextJson, json ?? '', s.bump ? '1' : '0');
      if (g < 0) continue;
      const change = hash === KEYS ? { key: id } : { user: id };
      if (s.bump) await this.#caughtUp(g, change);
      else if (hash === KEYS) this.#setKey(id, nextJson);
      else this.#setUser(id, nextJson);
      return s.next;
    }
    throw new StateError(`${hash === KEYS ? 'key' : 'user'} ${id} kept changing while it was updated`);
  }

  listUsers(): UserRecord[] {
    return [...this.#users.values()];
  }

  /**
   * Quota counts on Redis are counted by leased-quota.ts, which never calls this: a synchronous read
   * cannot reach Redis, and a quota that started from an empty count would hand out a fresh allowance.
   */
  loadCounters(): Map<string, number> {
    throw new InvariantError('quota counters on Redis are read by the leased quota (src/policy/leased-quota.ts), not loaded whole');
  }

  async saveCounters(day: string, entries: ReadonlyMap<string, number>): Promise<void> {
    if (entries.size === 0) return;
    const m = this.#redis.multi();
    for (const [user, count] of entries) m.hset(quotaKey(day), user, String(count));
    m.expire(quotaKey(day), 2 * 86_400);
    await m.exec();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.#syncing;
  }
}

/**
 * The state store on an open Redis link: loads the replica and subscribes to changes before it
 * resolves. The link stays the caller's to close.
 */
export async function openRedisStateStore(link: RedisLink, opts: RedisStoreOptions = {}): Promise<StateStore> {
  const store = new RedisStateStore(link, opts);
  await store.start();
  return store;
}
