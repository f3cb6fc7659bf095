/**
 * @module Who is calling: turns an `Authorization` header into a user and tier (docs/compatibility.md#authentication), on every
 * REST request and every MCP request that carries an API key.
 *
 * Three reads per request and no cache: the key by hash, then its owner. The store answers from a
 * memory map in about a microsecond, so revocations (`hpd keys revoke`) and tier changes
 * (`hpd users set-tier`) from another process apply to the very next request. (The public API allows a
 * 60 s cache; not having one is strictly fresher.)
 *
 * The two failure reasons map to the two 401 variants (docs/compatibility.md#the-401-answers): `missing` → a bare challenge,
 * `invalid` → `error="invalid_token"`. A third, `unavailable`, is a 503: a networked store that lost
 * its backend cannot tell an unknown key from one created elsewhere meanwhile (state-store.ts). JWTs are recognised only to be refused: REST takes API keys
 * only, and the MCP front verifies JWTs itself before falling back to this function.
 */
import { hashKey, KEY_PATTERN } from './api-keys.ts';
import type { StateStore } from './state-store.ts';
import type { Tier } from './tiers.ts';

export type AuthResult =
  | { ok: true; userId: string; tier: Tier; keyId: string }
  | { ok: false; reason: 'missing' | 'invalid' | 'unavailable' };

/** Three base64url segments, the first starting `eyJ` (`{"` encoded): a JWT (docs/compatibility.md#classifying-a-bearer-value). */
export const JWT_PATTERN = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** `last_used_at` is rewritten at most this often per key: it is for humans, not for accounting. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const MISSING: AuthResult = Object.freeze({ ok: false, reason: 'missing' });
const INVALID: AuthResult = Object.freeze({ ok: false, reason: 'invalid' });
export const UNAVAILABLE: AuthResult = Object.freeze({ ok: false, reason: 'unavailable' });

/** Keys with a last_used_at write in flight, so a burst of requests queues one write, not hundreds. */
const touching = new Set<string>();

/** The kind of a Bearer value (docs/compatibility.md#classifying-a-bearer-value), for fronts that accept more than API keys. */
export function classifyBearer(token: string): 'api_key' | 'jwt' | 'malformed' {
  if (KEY_PATTERN.test(token)) return 'api_key';
  if (JWT_PATTERN.test(token)) return 'jwt';
  return 'malformed';
}

/**
 * The Bearer value of an Authorization header, or undefined when the header is absent or uses another
 * scheme. The scheme is case-insensitive (RFC 9110 §11.1) and separated by exactly one space; the value
 * is returned as is (possibly empty) so that a botched Bearer header is `invalid`, not `missing`.
 */
export function bearerToken(authorizationHeader: string | undefined): string | undefined {
  if (authorizationHeader === undefined || authorizationHeader.length < 6) return undefined;
  if (authorizationHeader.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  if (authorizationHeader.length === 6) return '';
  return authorizationHeader[6] === ' ' ? authorizationHeader.slice(7) : undefined;
}

/**
 * Authenticates one request. Synchronous: the only write (last_used_at) runs in the background.
 *
 * @param authorizationHeader the raw header value; `''` or undefined when the request has none
 * @param now milliseconds since the epoch
 * @example
 * const auth = authenticate(req.getHeader('authorization'), store, Date.now());
 * if (!auth.ok) return unauthorized(auth.reason);
 */
export function authenticate(authorizationHeader: string | undefined, store: StateStore, now: number): AuthResult {
  const token = bearerToken(authorizationHeader);
  if (token === undefined) return MISSING;
  // Malformed values (JWTs included) never reach the store: no hashing, no lookup (docs/compatibility.md#api-keys).
  if (!KEY_PATTERN.test(token)) return INVALID;
  const health = store.health();
  if (health === 'unavailable') return UNAVAILABLE;
  const key = store.getKeyByHash(hashKey(token));
  if (key === undefined) return health === 'ok' ? INVALID : UNAVAILABLE;
  if (key.revoked_at !== null) return INVALID;
  const user = store.getUser(key.user_id);
  // A key whose owner is gone belongs to no account: fail closed rather than guess a tier.
  if (user === undefined) return health === 'ok' ? INVALID : UNAVAILABLE;
  if (key.last_used_at === null || Date.parse(key.last_used_at) <= now - LAST_USED_RESOLUTION_MS) touch(store, key.id, now);
  return { ok: true, userId: user.id, tier: user.tier, keyId: key.id };
}

/** Records a key's use (at most one write in flight per key; never awaited by a request). */
export function touch(store: StateStore, keyId: string, now: number): void {
  if (touching.has(keyId)) return;
  touching.add(keyId);
  const at = new Date(now).toISOString();
  // A conditional update, not a put of the record read above: a revocation committed by another
  // process in the meantime must survive, and an older timestamp must not replace a newer one.
  store
    .updateKey(keyId, (current) =>
      current.last_used_at === null || current.last_used_at < at ? { ...current, last_used_at: at } : undefined,
    )
    .catch((err: unknown) => {
      // Losing a last-used timestamp must never fail or slow a request; say so once and move on.
      process.emitWarning(`could not record last use of ${keyId}: ${err instanceof Error ? err.message : String(err)}`, 'HpdPolicyWarning');
    })
    .finally(() => touching.delete(keyId));
}
