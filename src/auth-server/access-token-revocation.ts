/**
 * @module RFC 7009 revocation of the server's JWT access tokens, which oidc-provider refuses with
 * `unsupported_token_type` (it cannot revoke what it never stored).
 *
 * Design: a revoked token's `jti` is recorded in the provider's own storage (the model
 * {@link REVOKED_ACCESS_TOKEN_MODEL}: oauth.mdb on one host, the shared Redis in a cluster) until the
 * token could no longer be accepted anyway, and the MCP endpoint looks it up on every verification
 * (credentials.ts), so every instance refuses it from the next request on. Only that token goes: RFC
 * 7009 §2.1 would also allow revoking the whole grant, but a client signing out of one device (what
 * clients call this for) must not sign the person out of the others, and its refresh token is revoked
 * by revoking the refresh token itself (the provider then revokes the grant, and `gid` stops every access
 * token issued under it).
 *
 * How it hooks in: the provider authenticates the client exactly as at the token endpoint and only
 * then rejects the JWT; its 'revocation.error' event marks that request, and the middleware, which the
 * route runs inside, replaces the 400 with RFC 7009's answer. The token is checked against the
 * server's own signing keys and issuer; a token that fails (garbage, another issuer's, expired beyond
 * the resource server's tolerance) or that belongs to another client gets the same 200 and no effect.
 */
import { createLocalJWKSet, jwtVerify, type JWK, type JWTVerifyGetKey } from 'jose';
import type { KoaContext } from 'oidc-provider';
import type { OAuthStore } from './lmdb-adapter.ts';
import { SIGNING_ALG } from './secrets.ts';
import { markIfRedisUnavailable } from './unavailable.ts';

/** The provider-storage model of revoked access tokens, keyed by `jti`. */
export const REVOKED_ACCESS_TOKEN_MODEL = 'RevokedAccessToken';

/**
 * Seconds past `exp` a revocation is still accepted and kept: at least the MCP verifier's clock
 * tolerance (30 s, credentials.ts), so no token outlives its record there.
 */
export const EXPIRY_MARGIN_S = 60;

const unsupported = new WeakSet<object>();

/** The provider's 'revocation.error' listener: remembers the requests refused for carrying a JWT. */
export function markStructuredTokenRefusal(ctx: unknown, err: unknown): void {
  const code = typeof err === 'object' && err !== null ? (err as { error?: unknown }).error : undefined;
  if (code === 'unsupported_token_type' && typeof ctx === 'object' && ctx !== null) unsupported.add(ctx);
}

export interface AccessTokenRevocation {
  /** Provider middleware (provider.use) answering the marked requests. */
  middleware(ctx: KoaContext, next: () => Promise<void>): Promise<void>;
  /** Whether the access token `jti` was revoked; rejects when the storage cannot answer. */
  isRevoked(jti: string): Promise<boolean>;
}

export function createAccessTokenRevocation(opts: {
  readonly issuer: string;
  readonly signingKeys: readonly JWK[];
  readonly oauth: OAuthStore;
  /** Milliseconds since the epoch. */
  readonly clock?: () => number;
}): AccessTokenRevocation {
  const clock = opts.clock ?? Date.now;
  const publicKeys = opts.signingKeys.map(({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use }));
  const keys: JWTVerifyGetKey = createLocalJWKSet({ keys: publicKeys });
  const revoked = () => opts.oauth.adapterFor(REVOKED_ACCESS_TOKEN_MODEL);

  /** The record to keep for `token` sent by client `clientId`, or undefined: no effect. */
  const recordFor = async (token: string, clientId: string): Promise<{ jti: string; ttl: number } | undefined> => {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: opts.issuer,
        algorithms: [SIGNING_ALG],
        typ: 'at+jwt',
        clockTolerance: EXPIRY_MARGIN_S,
        currentDate: new Date(clock()),
        requiredClaims: ['jti', 'exp'],
      });
      // RFC 7009 §2.1: the token must have been issued to the client asking.
      if (payload.client_id !== clientId || typeof payload.jti !== 'string') return undefined;
      const ttl = payload.exp! - Math.floor(clock() / 1000) + EXPIRY_MARGIN_S;
      return ttl > 0 ? { jti: payload.jti, ttl } : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    async middleware(ctx, next) {
      await next();
      if (!unsupported.has(ctx)) return;
      const clientId = ctx.oidc?.client?.clientId;
      const token = ctx.oidc?.params?.token;
      if (clientId === undefined || typeof token !== 'string') return;
      const record = await recordFor(token, clientId);
      try {
        if (record !== undefined) await revoked().upsert(record.jti, { jti: record.jti, clientId }, record.ttl);
      } catch (err) {
        // A 200 would tell the client the token is dead while it still works: 503, and it retries.
        if (markIfRedisUnavailable(ctx, err)) return;
        throw err;
      }
      ctx.status = 200;
      ctx.body = '';
      ctx.remove('content-type');
    },
    isRevoked: async (jti) => (await revoked().find(jti)) !== undefined,
  };
}
