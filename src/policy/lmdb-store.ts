/**
 * @module The embedded state store: one LMDB environment, `<dir>/state.mdb`, shared by the running
 * server and the `hpd keys` / `hpd users` commands in other processes.
 *
 * Why LMDB: reads are synchronous memory-map lookups (~1 µs), so the request path can read the key and
 * the user's current tier on every request instead of keeping a cache that would delay revocations
 * and tier changes. LMDB is multi-process safe: a write committed by the CLI is visible to the server's
 * next read, because lmdb-js renews its read transaction every event turn (and after each of its own
 * commits). No polling, no cache invalidation.
 *
 * Layout (named sub-databases of one environment, so writes across them can share a transaction):
 * - `keys`          key id → ApiKeyRecord
 * - `keys-by-hash`  SHA-256 hex of the plaintext → key id (the authentication lookup)
 * - `users`         user id → UserRecord
 * - `counters`      [day 'YYYY-MM-DD', user id] → requests counted that day. The array key sorts by day
 *                   first (ordered-binary), so one day is one contiguous range and old days prune as a
 *                   prefix.
 *
 * Not used on purpose: `sharedStructuresKey` (the msgpackr structure table would be written by several
 * processes; records here are few and small, so the per-record structure costs nothing that matters),
 * compression (records are a few hundred bytes), `cache` (a cache in front of the map would hide other
 * processes' writes).
 *
 * One server process per state directory: quota counters are held in memory by that process and
 * written here in the background (quota.ts); several servers would overwrite each other's counts. Scale
 * out with a Redis StateStore instead.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { ApiKeyRecord, StateStore, UserRecord } from './state-store.ts';
import { InvariantError } from '../invariant.ts';
import { assertLmdbFileUsable } from './lmdb-file-check.ts';
import type { DatabaseSpec } from './lmdb-deep-check.ts';

/** The environment file inside the state directory. */
export const STATE_FILE = 'state.mdb';
/** Its named databases and their values' encodings, for the deep read before it is opened (lmdb-deep-check.ts). */
export const STATE_DATABASES: DatabaseSpec = {
  keys: 'msgpack',
  'keys-by-hash': 'msgpack',
  users: 'msgpack',
  counters: 'msgpack',
  meta: 'binary',
};
const GENERATION = 'auth-generation';

/**
 * How long a generation read stands (monotonic clock). Reading it is an LMDB lookup of ~2 µs, a few
 * percent of a search request when done on every one; once per millisecond makes it free, while a
 * change committed by another process (`hpd keys revoke`) still applies within a millisecond and this
 * process's own writes at once (every write transaction drops the remembered value).
 */
export const GENERATION_REFRESH_MS = 1;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

type CounterKey = [day: string, userId: string];

function shiftDay(day: string, days: number): string {
  if (!DAY_PATTERN.test(day)) throw new InvariantError(`counter day must be YYYY-MM-DD, got "${day}"`);
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

class LmdbStateStore implements StateStore {
  readonly #root: RootDatabase;
  readonly #keys: Database<ApiKeyRecord, string>;
  readonly #keysByHash: Database<string, string>;
  readonly #users: Database<UserRecord, string>;
  readonly #counters: Database<number, CounterKey>;
  readonly #meta: Database<Buffer, string>;
  /**
   * The day before which this process last removed counters ('' before its first save). A save prunes
   * only when it moves that day forward: the quota saves every 25 ms under load, and a key scan in
   * each save made garbage that outlived scavenges on the main thread (a cursor and its iterator per
   * save), growing the old space until a mark-compact paused the core its REST workers share.
   */
  #prunedBefore = '';
  /** The generation last read, and when (monotonic ms): see {@link GENERATION_REFRESH_MS}. */
  #generation = 0;
  #generationReadAt = Number.NEGATIVE_INFINITY;

  constructor(path: string) {
    this.#root = open({ path, noSubdir: true, maxDbs: 9, compression: false });
    this.#keys = this.#root.openDB<ApiKeyRecord, string>({ name: 'keys' });
    this.#keysByHash = this.#root.openDB<string, string>({ name: 'keys-by-hash' });
    this.#users = this.#root.openDB<UserRecord, string>({ name: 'users' });
    this.#counters = this.#root.openDB<number, CounterKey>({ name: 'counters' });
    // Raw bytes: the generation is read on every request, and getBinaryFast decodes nothing.
    this.#meta = this.#root.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' });
  }

  health(): 'ok' {
    return 'ok';
  }

  generation(): number {
    const t = performance.now();
    if (t - this.#generationReadAt < GENERATION_REFRESH_MS) return this.#generation;
    this.#generation = Number(this.#storedGeneration());
    this.#generationReadAt = t;
    return this.#generation;
  }

  /** The generation as committed (inside a write transaction: as this transaction sees it). */
  #storedGeneration(): bigint {
    const raw = this.#meta.getBinaryFast(GENERATION);
    return raw === undefined || raw.length < 8 ? 0n : raw.readBigUInt64LE(0);
  }

  /** A write transaction; afterwards this process reads the generation afresh (its own change shows at once). */
  #write<T>(body: () => T): Promise<T> {
    return this.#root.transaction(body).finally(() => {
      this.#generationReadAt = Number.NEGATIVE_INFINITY;
    });
  }

  /** Inside a write transaction: anything that can change who a credential authenticates as. */
  #bump(): void {
    const next = Buffer.alloc(8);
    next.writeBigUInt64LE(this.#storedGeneration() + 1n);
    this.#meta.put(GENERATION, next);
  }

  getKeyByHash(hash: string): ApiKeyRecord | undefined {
    const id = this.#keysByHash.get(hash);
    if (id === undefined) return undefined;
    const rec = this.#keys.get(id);
    // Both reads share this event turn's read transaction, so the pair is consistent; the hash check
    // only guards against an index entry that outlived a (never expected) change of a key's hash.
    return rec !== undefined && rec.hash === hash ? rec : undefined;
  }

  getKey(id: string): ApiKeyRecord | undefined {
    return this.#keys.get(id);
  }

  async putKey(rec: ApiKeyRecord): Promise<void> {
    await this.#write(() => {
      const previous = this.#keys.get(rec.id);
      if (previous !== undefined && previous.hash !== rec.hash) this.#keysByHash.remove(previous.hash);
      this.#keys.put(rec.id, rec);
      this.#keysByHash.put(rec.hash, rec.id);
      this.#bump();
    });
  }

  async updateKey(id: string, update: (current: ApiKeyRecord) => ApiKeyRecord | undefined): Promise<ApiKeyRecord | undefined> {
    // Reads inside an lmdb-js transaction callback use the write transaction, which holds LMDB's
    // cross-process writer lock: nobody can commit between this read and the put.
    return this.#write(() => {
      const current = this.#keys.get(id);
      if (current === undefined) return undefined;
      const next = update(current);
      if (next === undefined) return current;
      if (next.id !== current.id || next.hash !== current.hash)
        throw new InvariantError(`updateKey must not change the id or hash of ${id}`);
      this.#keys.put(id, next);
      // last_used_at touches do not change authentication; revocations and re-ownership do.
      if (next.revoked_at !== current.revoked_at || next.user_id !== current.user_id) this.#bump();
      return next;
    });
  }

  async removeKey(id: string, when: (current: ApiKeyRecord) => boolean): Promise<ApiKeyRecord | undefined> {
    return this.#write(() => {
      const current = this.#keys.get(id);
      if (current === undefined || !when(current)) return undefined;
      this.#keys.remove(id);
      this.#keysByHash.remove(current.hash);
      this.#bump();
      return current;
    });
  }

  listKeys(): ApiKeyRecord[] {
    return Array.from(this.#keys.getRange(), (entry) => entry.value);
  }

  getUser(id: string): UserRecord | undefined {
    return this.#users.get(id);
  }

  async putUser(rec: UserRecord): Promise<void> {
    await this.#write(() => {
      this.#users.put(rec.id, rec);
      this.#bump();
    });
  }

  async updateUser(id: string, update: (current: UserRecord | undefined) => UserRecord | undefined): Promise<UserRecord | undefined> {
    return this.#write(() => {
      const current = this.#users.get(id);
      const next = update(current);
      if (next === undefined) return current;
      if (next.id !== id) throw new InvariantError(`updateUser must not change the id of ${id}`);
      this.#users.put(id, next);
      if (current === undefined || next.tier !== current.tier) this.#bump();
      return next;
    });
  }

  listUsers(): UserRecord[] {
    return Array.from(this.#users.getRange(), (entry) => entry.value);
  }

  loadCounters(day: string): Map<string, number> {
    const counts = new Map<string, number>();
    // [day] sorts before every [day, user] and [nextDay] after them all.
    for (const { key, value } of this.#counters.getRange({ start: [day], end: [shiftDay(day, 1)] })) {
      if (typeof value === 'number') counts.set(key[1], value);
    }
    return counts;
  }

  async saveCounters(day: string, entries: ReadonlyMap<string, number>): Promise<void> {
    const keepFrom = shiftDay(day, -1);
    const prune = keepFrom > this.#prunedBefore;
    await this.#write(() => {
      for (const [userId, count] of entries) this.#counters.put([day, userId], count);
      // Only today and yesterday are ever read back; older days would grow the file forever.
      if (!prune) return;
      const stale = Array.from(this.#counters.getKeys({ end: [keepFrom] }));
      for (const key of stale) this.#counters.remove(key);
    });
    // Another save may have pruned further meanwhile: the day only moves forward.
    if (keepFrom > this.#prunedBefore) this.#prunedBefore = keepFrom;
  }

  async close(): Promise<void> {
    await this.#root.flushed;
    await this.#root.close();
  }
}

/**
 * Opens (creating when needed) the state store in `dir`. Synchronous: the server opens it at startup
 * and a CLI command opens it for a single operation.
 *
 * @example
 * const store = openLmdbStateStore(process.env.HPD_STATE_DIR ?? 'var');
 * try { await createKey(store, { tier: 'pro', now: Date.now() }); } finally { await store.close(); }
 */
export function openLmdbStateStore(dir: string): StateStore {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, STATE_FILE);
  assertLmdbFileUsable(path);
  return new LmdbStateStore(path);
}
