/**
 * @module The mutable state behind the policy layer: API keys (hashed), users with their tiers and the
 * daily quota counters.
 *
 * It is an interface so that the embedded LMDB implementation (lmdb-store.ts, one server per state
 * directory) can be swapped for Redis when several instances serve together, without touching
 * authentication, quotas or the CLI. Reads are synchronous because the embedded store answers them
 * from a memory map in about a microsecond on the request path; a networked implementation keeps a
 * local replica to honour that. Writes are asynchronous and resolve once the change is committed and
 * visible to every other process using the same state.
 */
import type { Tier } from './tiers.ts';

/** One API key. The plaintext is never stored: it is shown once at creation, then only its hash exists. */
export interface ApiKeyRecord {
  /** 'key_' + 16 lower-case hex: a handle that is safe to print, log and pass to `hpd keys revoke`. */
  id: string;
  /** SHA-256 (lower-case hex) of the full plaintext key, prefix included. */
  hash: string;
  user_id: string;
  label: string | null;
  /** Informational only: requests use the owning user's current tier (docs/compatibility.md#api-keys). */
  tier_at_creation: Tier;
  /** ISO 8601 UTC timestamps (`Date#toISOString`), so they also sort as strings. */
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** An account. Every quota counter and tier decision is keyed by its id. */
export interface UserRecord {
  id: string;
  tier: Tier;
  created_at: string;
  updated_at: string;
  /** Reserved for the OAuth login page; absent for users created by `hpd keys` / `hpd users`. */
  email?: string;
  password_hash?: string;
}

/** Key ids as minted by api-keys.ts. */
export const KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/;

/**
 * Accepted user ids: generated ones ('usr_' + 16 hex) and operator-chosen ones such as an account
 * number or an e-mail address. No whitespace or control characters, so ids print on one line, and no
 * leading '-', so they cannot be mistaken for a command-line option.
 */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$/;

/**
 * Whether a store answers authoritatively: 'ok'; 'degraded' when a networked store lost its backend
 * and answers from its last known state (known keys keep working; an unknown key may have been created
 * elsewhere, so it is not refused as invalid); 'lost' when the backend answers but has lost the data
 * (an emptied Redis) or holds another dataset: served as 'degraded' until an operator restores it or
 * runs `hpd redis adopt`/`init`; 'unavailable' once either has lasted too long.
 */
export type StoreHealth = 'ok' | 'degraded' | 'lost' | 'unavailable';

export interface StateStore {
  /** See {@link StoreHealth}; the embedded store is always 'ok'. */
  health(): StoreHealth;
  /**
   * A number that changes whenever a write could change the outcome of an authentication (a key
   * created, revoked or moved, a user created or re-tiered), in any process. Caches of authentication
   * results compare it on every request instead of expiring on a timer, so revocations apply at once
   * (an implementation may take up to a millisecond to see another process's change).
   */
  generation(): number;
  /** The key whose plaintext hashes to `hash`, revoked or not; undefined when none. */
  getKeyByHash(hash: string): ApiKeyRecord | undefined;
  getKey(id: string): ApiKeyRecord | undefined;
  /** Inserts or replaces a key record and its hash index entry in one transaction. */
  putKey(rec: ApiKeyRecord): Promise<void>;
  /**
   * Atomic read-modify-write of one key: `update` sees the latest committed record (including writes
   * from other processes) and returns the replacement, or undefined to leave it unchanged. It must be
   * synchronous and free of side effects (an implementation may call it more than once). Resolves to
   * the record as stored afterwards, or undefined when no key has this id. Needed because a plain
   * get-then-put from the server (e.g. touching last_used_at) could otherwise overwrite a revocation
   * that a CLI committed in between.
   */
  updateKey(id: string, update: (current: ApiKeyRecord) => ApiKeyRecord | undefined): Promise<ApiKeyRecord | undefined>;
  /**
   * Deletes a key record and its hash index entry in one step, if `when` holds for the latest committed
   * record (same rules as updateKey's `update`). Resolves to the deleted record, or undefined when no
   * key has this id or `when` said no.
   */
  removeKey(id: string, when: (current: ApiKeyRecord) => boolean): Promise<ApiKeyRecord | undefined>;
  /** Every key, revoked ones included, in no particular order. */
  listKeys(): ApiKeyRecord[];
  getUser(id: string): UserRecord | undefined;
  putUser(rec: UserRecord): Promise<void>;
  /** Atomic read-modify-write (or insert, when `current` is undefined) of one user; see updateKey. */
  updateUser(id: string, update: (current: UserRecord | undefined) => UserRecord | undefined): Promise<UserRecord | undefined>;
  listUsers(): UserRecord[];
  /** Requests counted per user id on a UTC day ('YYYY-MM-DD'); users without a count are absent. */
  loadCounters(day: string): Map<string, number>;
  /**
   * Stores the given counts for `day`, replacing earlier values of those users (other users' counts
   * for that day are kept). Implementations may drop days older than the day before `day`.
   */
  saveCounters(day: string, entries: ReadonlyMap<string, number>): Promise<void>;
  /** Waits for pending writes, then releases the store. No method may be called afterwards. */
  close(): Promise<void>;
}
