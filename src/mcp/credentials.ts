/**
 * @module Who is calling the MCP server: an API key (the same keys as REST) or an OAuth 2.1 access token.
 *
 * Access tokens are RS256 JWTs (RFC 9068) verified with jose against the authorization server's JWKS,
 * discovered from its metadata and cached by jose (an unknown `kid` triggers a refetch, which is how key
 * rotation is picked up). Only RS256 is accepted, so `alg: none` and HS256 tokens signed with the public
 * key fail before any key is used. The caller's tier always comes from our user registry by user id (the
 * token's `sub`; unknown users are Free), and the daily counter is keyed by that id, so rotating tokens
 * or mixing tokens with API keys never resets it.
 */
import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { API_KEY_UNVERIFIABLE } from '../operations/problems.ts';
import { AuthCache } from '../policy/auth-cache.ts';
import { classifyBearer, bearerToken } from '../policy/authenticate.ts';
import { isRedisUnavailable } from '../policy/redis-failure.ts';
import type { StateStore } from '../policy/state-store.ts';
import type { Tier } from '../policy/tiers.ts';

export interface Principal {
  readonly userId: string;
  readonly tier: Tier;
  readonly kind: 'api_key' | 'oauth';
  /** The raw credential (the SDK's AuthInfo wants it). */
  readonly token: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

const UNAVAILABLE_KEY: CredentialResult = {
  ok: false,
  reason: 'unavailable',
  description: API_KEY_UNVERIFIABLE,
};

const UNAVAILABLE_GRANT: CredentialResult = {
  ok: false,
  reason: 'unavailable',
  description: 'The service cannot check whether this access token was revoked right now (its shared state store is unreachable)',
};

export type CredentialResult =
  | { ok: true; principal: Principal }
  | { ok: false; reason: 'missing' | 'invalid' | 'unavailable'; description: string };

export interface TokenVerifierOptions {
  /** Issuer identifier of the authorization server (the `iss` of its tokens). */
  readonly issuer: string;
  /** The MCP resource identifier: tokens must carry it as `aud`. */
  readonly resource: string;
  readonly store: StateStore;
  /** Seconds of clock skew tolerated on exp/nbf/iat. */
  readonly clockToleranceSeconds?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly clock?: () => number;
  /** JWKS resolver override (tests with a local key set). */
  readonly keys?: JWTVerifyGetKey;
  /** Oldest access token accepted, by its `iat`, whatever its `exp` says (default {@link MAX_TOKEN_AGE_SECONDS}). */
  readonly maxTokenAgeSeconds?: number;
  /**
   * Whether the grant a token names (`gid`) still stands, when the issuer is the embedded server: a
   * revoked grant (a refresh token revoked or replayed) then stops its access tokens at once, not when
   * they expire. One state-store read per token verification (a Redis round trip in clusters).
   */
  readonly grantActive?: (grantId: string) => Promise<boolean>;
  /**
   * Whether the token `jti` was revoked on its own (RFC 7009, the embedded server): checked with the
   * grant, on every verification and uncached, so a revocation through any instance holds on all of
   * them from the next request. Tokens without a `jti` are refused when this is given.
   */
  readonly accessTokenRevoked?: (jti: string) => Promise<boolean>;
}

/**
 * An hour: the embedded server's tokens live 15 minutes and external issuers' commonly an hour, so a
 * token older than that is a replay of a leaked one or an issuer misconfigured to mint long-lived ones.
 */
export const MAX_TOKEN_AGE_SECONDS = 3600;

export interface CredentialVerifier {
  verify(authorizationHeader: string | undefined): Promise<CredentialResult>;
}

/** Finds the JWKS of an issuer from its RFC 8414 (then OIDC) metadata. */
async function discoverJwks(issuer: string): Promise<URL> {
  const base = issuer.replace(/\/+$/, '');
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    try {
      const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) continue;
      const meta = (await res.json()) as { jwks_uri?: unknown; issuer?: unknown };
      if (typeof meta.jwks_uri === 'string') return new URL(meta.jwks_uri);
    } catch {
      // try the next document
    }
  }
  // A reason for verify()'s catch, which answers the request with an `unauthorized` problem.
  throw new Error(`no authorization server metadata with a jwks_uri at ${base}`);
}

export function createCredentialVerifier(opts: TokenVerifierOptions): CredentialVerifier {
  const clock = opts.clock ?? Date.now;
  let keys: JWTVerifyGetKey | undefined = opts.keys;
  let discovering: Promise<JWTVerifyGetKey> | undefined;
  const keySet = async (): Promise<JWTVerifyGetKey> => {
    if (keys !== undefined) return keys;
    discovering ??= discoverJwks(opts.issuer)
      .then((url) => {
        keys = createRemoteJWKSet(url, { cooldownDuration: 30_000, cacheMaxAge: 600_000, timeoutDuration: 5_000 });
        return keys;
      })
      .finally(() => {
        discovering = undefined;
      });
    return discovering;
  };
  // SDK clients send `new URL(resource).href`, which may add one trailing slash: accept both spellings.
  const apiKeys = new AuthCache(opts.store);
  const audiences = [opts.resource.replace(/\/+$/, ''), `${opts.resource.replace(/\/+$/, '')}/`];

  return {
    async verify(header) {
      const token = bearerToken(header);
      if (token === undefined) return { ok: false, reason: 'missing', description: 'No Bearer credential' };
      const kind = classifyBearer(token);
      if (kind === 'api_key') {
        const who = apiKeys.authenticate(header, clock());
        if (!who.ok && who.reason === 'unavailable') return UNAVAILABLE_KEY;
        if (!who.ok) return { ok: false, reason: 'invalid', description: 'The API key is unknown or revoked' };
        return {
          ok: true,
          principal: {
            userId: who.userId,
            tier: who.tier,
            kind: 'api_key',
            token,
            clientId: who.keyId,
            scopes: [],
            expiresAt: Math.floor(clock() / 1000) + 3600,
          },
        };
      }
      if (kind !== 'jwt') return { ok: false, reason: 'invalid', description: 'The credential is neither an API key nor an access token' };
      try {
        // RFC 9068: only a JWT typed as an access token (an ID token signed by the same issuer is not
        // one), with its issue time, and not older than the bound above.
        const { payload } = await jwtVerify(token, await keySet(), {
          issuer: opts.issuer,
          audience: audiences,
          algorithms: ['RS256'],
          typ: 'at+jwt',
          maxTokenAge: opts.maxTokenAgeSeconds ?? MAX_TOKEN_AGE_SECONDS,
          clockTolerance: opts.clockToleranceSeconds ?? 30,
          currentDate: new Date(clock()),
          requiredClaims: ['exp', 'sub', 'iat'],
        });
        const { gid, jti } = payload;
        // Both lookups at once: one round trip's wait in a cluster.
        const [grantStands, tokenRevoked] = await Promise.all([
          opts.grantActive === undefined || typeof gid !== 'string' ? true : opts.grantActive(gid),
          opts.accessTokenRevoked === undefined ? false : typeof jti !== 'string' || opts.accessTokenRevoked(jti),
        ]);
        if (!grantStands) return { ok: false, reason: 'invalid', description: 'The access token was revoked (its grant no longer stands)' };
        if (tokenRevoked) return { ok: false, reason: 'invalid', description: 'The access token was revoked' };
        const userId = String(payload.sub);
        // The token is valid, but the tier comes from the store, which past its grace without Redis knows nothing reliable.
        if (opts.store.health() === 'unavailable')
          return {
            ok: false,
            reason: 'unavailable',
            description: 'The service cannot look up this account right now (its shared state store is unavailable)',
          };
        const user = opts.store.getUser(userId);
        return {
          ok: true,
          principal: {
            userId,
            tier: user?.tier ?? 'free',
            kind: 'oauth',
            token,
            clientId: typeof payload.client_id === 'string' ? payload.client_id : 'unknown',
            scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
            expiresAt: payload.exp!,
          },
        };
      } catch (err) {
        // The grant could not be looked up (Redis unreachable or failing over): the token may well be
        // good, and a 401 would make the client throw it away and start a new authorization.
        if (isRedisUnavailable(err)) return UNAVAILABLE_GRANT;
        return { ok: false, reason: 'invalid', description: describeJoseError(err) };
      }
    },
  };
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The access token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `The access token's ${err.claim} claim is not accepted`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'The access token signature is invalid';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'The access token algorithm is not accepted (RS256 only)';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'The access token was signed by an unknown key';
  return 'The access token is invalid';
}
