/**
 * @module API keys and the users that own them: minting, hashing, revoking, and setting a user's tier.
 *
 * A key is `hpd_` + 40 lower-case hex characters (160 random bits; docs/compatibility.md#api-keys). Only its SHA-256 is
 * stored: a leaked state file yields no usable key, and a key is shown exactly once, at creation. The
 * hash is a plain SHA-256 rather than a slow password hash because the key is random, not
 * human-chosen (no dictionary to attack), and it is computed on every request.
 *
 * Users exist here only as key owners (and later as OAuth subjects), so they are managed in this module:
 *
 * - `createKey` with no `userId` creates a new user (`usr_` + 16 hex) with the given tier.
 * - `createKey` with the id of a user that does not exist creates that user with the given tier.
 * - `createKey` with the id of an existing user **sets that user's tier to `tier`** (and the result
 *   reports the change). Decision: `--tier` on `hpd keys create` is mandatory, so keeping the old tier
 *   would silently ignore what the operator typed, and a per-key tier would contradict the public API
 *   (requests use the account's current tier, docs/compatibility.md#api-keys). The tier is recorded on the key as
 *   `tier_at_creation` for the audit trail only.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiKeyRecord, StateStore, UserRecord } from './state-store.ts';
import { KEY_ID_PATTERN, USER_ID_PATTERN } from './state-store.ts';
import type { Tier } from './tiers.ts';
import { InvariantError } from '../invariant.ts';

/** The only shape of plaintext key that is ever looked up (docs/compatibility.md#api-keys). */
export const KEY_PATTERN = /^hpd_[0-9a-f]{40}$/;

/** No key has this id (an operator typo, not a fault). */
export class UnknownKeyError extends Error {
  constructor(keyId: string) {
    super(`no API key ${keyId}`);
    this.name = 'UnknownKeyError';
  }
}

/** Longest accepted label; labels are for humans reading `hpd keys list`. */
export const MAX_LABEL_LENGTH = 200;

export interface CreateKeyOptions {
  tier: Tier;
  /** Owner; a new user id is generated when absent. */
  userId?: string;
  label?: string | null;
  /** Milliseconds since the epoch (the same clock the quota uses). */
  now: number;
}

export interface CreatedKey {
  /** Show once, never store. */
  plaintext: string;
  record: ApiKeyRecord;
  /** The owner as stored after the call. */
  user: UserRecord;
  /** What happened to the owner: new, tier changed (from `previousTier`) or untouched. */
  userChange: 'created' | 'tier-changed' | 'unchanged';
  previousTier?: Tier;
}

export interface SetTierResult {
  user: UserRecord;
  change: 'created' | 'tier-changed' | 'unchanged';
  previousTier?: Tier;
}

/**
 * A fresh random key and its hash.
 *
 * @example const { plaintext, hash } = generateKey(); // plaintext 'hpd_3f…', hash = hashKey(plaintext)
 */
export function generateKey(): { plaintext: string; hash: string } {
  const plaintext = `hpd_${randomBytes(20).toString('hex')}`;
  return { plaintext, hash: hashKey(plaintext) };
}

/** SHA-256 of the whole plaintext key, prefix included, as lower-case hex. */
export function hashKey(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex');
}

function iso(now: number): string {
  return new Date(now).toISOString();
}

// The CLI refuses a bad user id or label with a UsageError before it calls these functions.
function assertUserId(userId: string): void {
  if (!USER_ID_PATTERN.test(userId)) {
    throw new InvariantError(`invalid user id "${userId}": use 1-128 letters, digits or . _ @ : + -, starting with a letter or digit`);
  }
}

/**
 * Sets a user's tier, creating the user when missing. Atomic with respect to other processes.
 *
 * @example await setUserTier(store, 'usr_0123456789abcdef', 'pro', Date.now());
 */
export async function setUserTier(store: StateStore, userId: string, tier: Tier, now: number): Promise<SetTierResult> {
  assertUserId(userId);
  // Filled in by the update callback; reset on every call because the store may run it more than once.
  let outcome: { change: SetTierResult['change']; previousTier?: Tier } = { change: 'unchanged' };
  const user = await store.updateUser(userId, (current) => {
    if (current === undefined) {
      outcome = { change: 'created' };
      return { id: userId, tier, created_at: iso(now), updated_at: iso(now) };
    }
    if (current.tier === tier) {
      outcome = { change: 'unchanged' };
      return undefined;
    }
    outcome = { change: 'tier-changed', previousTier: current.tier };
    return { ...current, tier, updated_at: iso(now) };
  });
  // The update above always writes a missing user.
  if (user === undefined) throw new InvariantError(`user ${userId} could not be stored`);
  return { user, ...outcome };
}

/**
 * Mints a key for a user (see the module notes for how the user and its tier are handled).
 *
 * @example
 * const { plaintext, record } = await createKey(store, { tier: 'pro', label: 'ci', now: Date.now() });
 */
export async function createKey(store: StateStore, options: CreateKeyOptions): Promise<CreatedKey> {
  const label = options.label === undefined || options.label === null || options.label === '' ? null : options.label;
  if (label !== null) {
    // Control characters would break the one-line-per-key output of `hpd keys list`.
    if (label.length > MAX_LABEL_LENGTH || /\p{Cc}/u.test(label)) {
      throw new InvariantError(`label must be at most ${MAX_LABEL_LENGTH} characters without control characters`);
    }
  }
  const userId = options.userId ?? `usr_${randomBytes(8).toString('hex')}`;
  const owner = await setUserTier(store, userId, options.tier, options.now);
  const { plaintext, hash } = generateKey();
  const record: ApiKeyRecord = {
    id: `key_${randomBytes(8).toString('hex')}`,
    hash,
    user_id: userId,
    label,
    tier_at_creation: options.tier,
    created_at: iso(options.now),
    last_used_at: null,
    revoked_at: null,
  };
  await store.putKey(record);
  const result: CreatedKey = { plaintext, record, user: owner.user, userChange: owner.change };
  if (owner.previousTier !== undefined) result.previousTier = owner.previousTier;
  return result;
}

/**
 * Revokes a key; effective on the server's next request (no cache to expire). Revoking a revoked key
 * keeps the original `revoked_at` and succeeds, so scripts can retry safely.
 *
 * @throws Error `no API key key_…` when no key has this id.
 * @example await revokeKey(store, 'key_0123456789abcdef', Date.now());
 */
export async function revokeKey(store: StateStore, keyId: string, now: number): Promise<ApiKeyRecord> {
  const rec = KEY_ID_PATTERN.test(keyId)
    ? await store.updateKey(keyId, (current) => (current.revoked_at === null ? { ...current, revoked_at: iso(now) } : undefined))
    : undefined;
  if (rec === undefined) throw new UnknownKeyError(keyId);
  return rec;
}

/**
 * Deletes the records of keys revoked before `before` (ms since the epoch), which are otherwise kept
 * for `hpd keys list` as long as the store lives; a key not revoked, or revoked since, is never touched
 * (checked again at the deletion, so a key revoked meanwhile by another process is judged as it is
 * then). Freed pages are reused by later writes; a compacted file comes from `hpd state backup`.
 * Resolves to the records deleted.
 *
 * @example const gone = await purgeRevokedKeys(store, Date.parse('2026-01-01'));
 */
export async function purgeRevokedKeys(store: StateStore, before: number): Promise<ApiKeyRecord[]> {
  const cutoff = iso(before);
  const old = (k: ApiKeyRecord): boolean => k.revoked_at !== null && k.revoked_at < cutoff;
  const gone: ApiKeyRecord[] = [];
  for (const k of store.listKeys().filter(old)) {
    const removed = await store.removeKey(k.id, old);
    if (removed !== undefined) gone.push(removed);
  }
  return gone;
}

/** Every key, revoked ones included, oldest first (ties by id, so the order is stable). */
export function listKeys(store: StateStore): ApiKeyRecord[] {
  return store
    .listKeys()
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Every user, oldest first (ties by id). */
export function listUsers(store: StateStore): UserRecord[] {
  return store
    .listUsers()
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
