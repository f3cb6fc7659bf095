/**
 * @module oidc-provider storage in LMDB: `<stateDir>/oauth.mdb`, one environment holding every model
 * the provider persists (Session, Interaction, AuthorizationCode, RefreshToken, Grant, Client,
 * RegistrationAccessToken, …).
 *
 * Why not the provider's in-memory adapter: registered clients, grants and refresh tokens must survive
 * a restart (an MCP client that registered yesterday must not be told its client_id is unknown). Why
 * LMDB rather than a second JSON file: it is already the project's embedded store, writes are
 * transactional (a refresh-token rotation or a grant revocation is all-or-nothing) and reads are
 * synchronous memory-map lookups. JWT access tokens are never stored: the provider does not hand them
 * to the adapter.
 *
 * Layout (two named databases):
 * - `records` [model, id] → { payload, expiresAt }  (expiresAt in ms since the epoch, null = never)
 * - `indexes` ['uid', model, uid] → id               (Session.findByUid)
 *             ['code', model, userCode] → id         (findByUserCode, device flow)
 *             ['grant', grantId, model, id] → expiresAt   (revokeByGrantId)
 * Array keys sort element by element (ordered-binary), so one grant's tokens are one contiguous range.
 *
 * Expiry: an expired record is invisible to `find` at once and physically deleted by `sweep()` (run at
 * start and periodically by the server). The stored expiry adds the provider's clock tolerance, as its
 * own memory adapter does, so a token the provider still accepts within tolerance is still found.
 */
import { chmodSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { assertLmdbFileUsable } from '../policy/lmdb-file-check.ts';
import type { DatabaseSpec } from '../policy/lmdb-deep-check.ts';

export const OAUTH_FILE = 'oauth.mdb';
/** Its named databases and their values' encodings, for the deep read before it is opened (lmdb-deep-check.ts). */
export const OAUTH_DATABASES: DatabaseSpec = { records: 'msgpack', indexes: 'msgpack' };

/** oidc-provider's default clockTolerance (seconds), which this server keeps. */
export const CLOCK_TOLERANCE_SECONDS = 15;

/** Models whose instances belong to a grant and die with it (as in oidc-provider's memory adapter). */
export const GRANTABLE: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

interface StoredRecord {
  payload: AdapterPayload;
  expiresAt: number | null;
}

type RecordKey = [model: string, id: string];
type IndexKey = [kind: 'uid' | 'code', model: string, value: string] | [kind: 'grant', grantId: string, model: string, id: string];
type IndexValue = string | number | null;

export interface OAuthStore {
  /** The factory oidc-provider's `adapter` option takes. */
  adapterFor(model: string): Adapter;
  /** Deletes expired records and index entries; resolves to how many records went. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens (creating when needed) the provider store at `path`.
 *
 * @param clock milliseconds since the epoch; injectable so tests can age records.
 * @example const oauth = openOAuthStore(join(stateDir, OAUTH_FILE)); new Provider(issuer, { adapter: oauth.adapterFor });
 */
export function openOAuthStore(path: string, clock: () => number = Date.now): OAuthStore {
  assertLmdbFileUsable(path);
  const root: RootDatabase = open({ path, noSubdir: true, maxDbs: 4, compression: false });
  // Refresh tokens, sessions and confidential clients' secrets live here: owner-only, like the keys.
  for (const file of [path, `${path}-lock`]) {
    try {
      chmodSync(file, 0o600);
    } catch {
      // The lock file may not exist on every platform; the data file always does.
    }
  }
  const db = new OAuthDb(root, clock);
  const adapters = new Map<string, LmdbAdapter>();
  return {
    adapterFor(model: string): Adapter {
      let adapter = adapters.get(model);
      if (adapter === undefined) {
        adapter = new LmdbAdapter(model, db);
        adapters.set(model, adapter);
      }
      return adapter;
    },
    sweep: () => db.sweep(),
    async close(): Promise<void> {
      await root.flushed;
      await root.close();
    },
  };
}

/** The two databases and the clock, shared by the adapters of every model. */
class OAuthDb {
  readonly root: RootDatabase;
  readonly clock: () => number;
  readonly records: Database<StoredRecord, RecordKey>;
  readonly indexes: Database<IndexValue, IndexKey>;

  constructor(root: RootDatabase, clock: () => number) {
    this.root = root;
    this.clock = clock;
    this.records = root.openDB<StoredRecord, RecordKey>({ name: 'records' });
    this.indexes = root.openDB<IndexValue, IndexKey>({ name: 'indexes' });
  }

  live(rec: StoredRecord | undefined): rec is StoredRecord {
    return rec !== undefined && (rec.expiresAt === null || rec.expiresAt > this.clock());
  }

  /** Removes the secondary entries of a record; must run inside a transaction. */
  unindex(model: string, id: string, payload: AdapterPayload): void {
    const { indexes } = this;
    if (typeof payload.uid === 'string' && indexes.get(['uid', model, payload.uid]) === id) indexes.remove(['uid', model, payload.uid]);
    if (typeof payload.userCode === 'string' && indexes.get(['code', model, payload.userCode]) === id)
      indexes.remove(['code', model, payload.userCode]);
    if (typeof payload.grantId === 'string') indexes.remove(['grant', payload.grantId, model, id]);
  }

  /** Must run inside a transaction. */
  removeRecord(model: string, id: string): void {
    const rec = this.records.get([model, id]);
    if (rec === undefined) return;
    this.unindex(model, id, rec.payload);
    this.records.remove([model, id]);
  }

  grantMembers(grantId: string): Array<[model: string, id: string]> {
    const members: Array<[string, string]> = [];
    for (const key of this.indexes.getKeys({ start: ['grant', grantId] })) {
      if (key[0] !== 'grant' || key[1] !== grantId) break;
      members.push([key[2], key[3]]);
    }
    return members;
  }

  async sweep(): Promise<number> {
    const { records, indexes } = this;
    const now = this.clock();
    const expired: RecordKey[] = [];
    for (const { key, value } of records.getRange()) {
      if (value.expiresAt !== null && value.expiresAt <= now) expired.push(key);
    }
    const staleGrantEntries: IndexKey[] = [];
    for (const { key, value } of indexes.getRange()) {
      if (key[0] === 'grant' && typeof value === 'number' && value <= now) staleGrantEntries.push(key);
    }
    if (expired.length === 0 && staleGrantEntries.length === 0) return 0;
    let removed = 0;
    await this.root.transaction(() => {
      for (const [model, id] of expired) {
        // Re-read under the writer lock: an upsert since the scan may have extended it.
        const rec = records.get([model, id]);
        if (rec === undefined || rec.expiresAt === null || rec.expiresAt > now) continue;
        this.removeRecord(model, id);
        removed += 1;
      }
      for (const key of staleGrantEntries) {
        const value = indexes.get(key);
        if (typeof value === 'number' && value <= now) indexes.remove(key);
      }
    });
    return removed;
  }
}

/** The adapter of one model, as oidc-provider asks for it. */
class LmdbAdapter implements Adapter {
  readonly #model: string;
  readonly #db: OAuthDb;

  constructor(model: string, db: OAuthDb) {
    this.#model = model;
    this.#db = db;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const model = this.#model;
    const { records, indexes } = this.#db;
    const expiresAt = typeof expiresIn === 'number' ? this.#db.clock() + (expiresIn + CLOCK_TOLERANCE_SECONDS) * 1000 : null;
    await this.#db.root.transaction(() => {
      const previous = records.get([model, id]);
      if (previous !== undefined) this.#db.unindex(model, id, previous.payload);
      records.put([model, id], { payload, expiresAt });
      if (model === 'Session' && typeof payload.uid === 'string') indexes.put(['uid', model, payload.uid], id);
      if (typeof payload.userCode === 'string') indexes.put(['code', model, payload.userCode], id);
      if (GRANTABLE.has(model) && typeof payload.grantId === 'string') indexes.put(['grant', payload.grantId, model, id], expiresAt);
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const rec = this.#db.records.get([this.#model, id]);
    return this.#db.live(rec) ? rec.payload : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = this.#db.indexes.get(['uid', this.#model, uid]);
    return typeof id === 'string' ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = this.#db.indexes.get(['code', this.#model, userCode]);
    return typeof id === 'string' ? this.find(id) : undefined;
  }

  async consume(id: string): Promise<void> {
    const model = this.#model;
    const { records } = this.#db;
    await this.#db.root.transaction(() => {
      const rec = records.get([model, id]);
      if (rec === undefined) return;
      // Seconds, as the provider's own clock reads them: the provider compares it with its epochTime().
      records.put([model, id], { payload: { ...rec.payload, consumed: Math.floor(Date.now() / 1000) }, expiresAt: rec.expiresAt });
    });
  }

  async destroy(id: string): Promise<void> {
    const model = this.#model;
    await this.#db.root.transaction(() => this.#db.removeRecord(model, id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // Every member of the grant, whatever this adapter's model: the provider calls this once per
    // model, and the first call leaving nothing for the others is harmless.
    const db = this.#db;
    await db.root.transaction(() => {
      for (const [model, id] of db.grantMembers(grantId)) {
        db.removeRecord(model, id);
        db.indexes.remove(['grant', grantId, model, id]);
      }
    });
  }
}
