/**
 * @module The embedded OAuth 2.1 authorization server for the MCP endpoint
 * (docs/compatibility.md#oauth-for-the-mcp-endpoint): oidc-provider 9 on node:http, with this
 * project's user registry as the account store, its own log-in / sign-up page, and LMDB persistence in the state directory (or, with the `redis` option, Redis shared by
 * several instances behind one load balancer).
 *
 * Why embedded rather than a hosted IdP: the service must run from one checkout with one command, the
 * accounts and tiers already live in the StateStore, and MCP clients need dynamic registration,
 * resource indicators and RFC 9068 JWT access tokens, which oidc-provider implements completely.
 *
 * What a client sees (all discovered from metadata):
 * - metadata at /.well-known/oauth-authorization-server (RFC 8414) and /.well-known/openid-configuration,
 *   CORS-open; `code_challenge_methods_supported: ["S256"]`
 * - /auth (authorization, code flow only, PKCE S256 required for every client), /token, /reg (dynamic
 *   registration, open, CORS-open), /jwks, /token/revocation; no userinfo endpoint (every access token
 *   is a JWT for the MCP audience; sub and email are in the ID token)
 * - access tokens: RS256 JWTs, header typ at+jwt, aud = the MCP resource, claims iss, sub (user id),
 *   client_id, scope, iat, exp, jti and `gid` (the grant); lifetime 900 s by default; revocable one by
 *   one at /token/revocation (access-token-revocation.ts)
 * - refresh tokens: only with offline_access, opaque, rotated on every use (a reused one revokes the
 *   whole grant, per OAuth 2.1), each valid 30 days from its issue
 * - redirect URIs: https, or http on a loopback host, or (native apps) a reverse-domain private-use
 *   scheme (redirect-uris.ts); an erroneous /auth of a dynamically registered client is answered
 *   with a page and a "Continue" link, never a redirect (error-redirects.ts, RFC 9700 §4.11.2)
 *
 * Two request adjustments before the provider sees /auth (authorization-query.ts): a missing
 * scope becomes the four supported scopes, and offline_access gets prompt=consent added, because
 * OpenID Connect otherwise drops it silently and plain OAuth 2.1 clients would get no refresh token.
 *
 * Lifetimes the public API does not fix (chosen here): authorization code 60 s, interaction 1 h, browser
 * login session 14 days, grant 365 days. The grant bounds a chain of rotated refresh tokens: a client
 * used at least once a month stays connected for a year, then the person logs in again.
 *
 * This file starts the listener and wires the parts: the provider's configuration is in
 * provider-config.ts, the routes in front of it in routes.ts.
 *
 * The issuer must be a bare origin (no path): routes are served at the root. Either pass it, or omit
 * it and the server derives `http://<host>:<bound port>` after listening (useful with port 0). Behind a
 * TLS-terminating proxy pass the public https origin as issuer and set `trustProxy`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { ClientMetadata } from 'oidc-provider';
import { toListenError } from '../http/listen-error.ts';
import { createNodeListener, DEFAULT_DRAIN_MS, type ListenerLimits, type NodeListener } from '../http/node-listener.ts';
import { requestPath } from '../http/request-target.ts';
import type { TrustedProxies } from '../http/trusted-proxies.ts';
import { InvariantError } from '../invariant.ts';
import type { StateStore } from '../policy/state-store.ts';
import type { InteractionContext } from './interactions.ts';
import { OAUTH_FILE, openOAuthStore, type OAuthStore } from './lmdb-adapter.ts';
import { expireUnusedClients } from './unused-clients.ts';
import { createRegistrationLimit } from './registration-limit.ts';
import { ALL_SIGNUPS_PER_HOUR, createSignupLimit } from './signup-limit.ts';
import { createRedisRegistrationLimit } from './redis-registration-limit.ts';
import { LoginThrottle } from './login-throttle.ts';
import { createProvider } from './provider-config.ts';
import { openRedisOAuthStore } from './redis-adapter.ts';
import { RedisLoginThrottle } from './redis-login-throttle.ts';
import { loadOrCreateRedisAuthSecrets } from './redis-secrets.ts';
import { createRoutes, type RequestHandler } from './routes.ts';
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
import { loadOrCreateAuthSecrets, type AuthSecrets } from './secrets.ts';
import type { AccessLog } from '../observability/access-log.ts';
import type { HealthProbes } from '../observability/health-probes.ts';
import { createNodeRequestObserver } from '../http/node-request-observer.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';

export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 900;

/** How often expired provider records are deleted from oauth.mdb. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export interface AuthServerOptions {
  /**
   * The issuer identifier, a bare origin without trailing slash (`http://127.0.0.1:8082`). Omit it to
   * derive `http://<host>:<port actually bound>` (the only way to combine an issuer with port 0).
   */
  issuer?: string;
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** The MCP resource identifier: the access-token audience, byte-identical to the PRM `resource`. */
  mcpResource: string;
  /** The user registry: accounts, e-mails, password hashes, tiers. Not closed by this server. */
  store: StateStore;
  /**
   * Where auth-keys.json and oauth.mdb live (the same directory as the state store is fine). Unused
   * when `redis` is given.
   */
  stateDir: string;
  /**
   * Keep the provider's storage (redis-adapter.ts) and the signing and cookie keys (redis-secrets.ts)
   * in this Redis instead of the state directory, so several instances behind one load balancer (with
   * the same `issuer`) share clients, grants, refresh tokens and one JWKS; the log-in throttle's
   * counters live there too (redis-login-throttle.ts). Not closed by this server.
   */
  redis?: Redis;
  /** Access-token lifetime; default 900 s. */
  accessTokenTtlSeconds?: number;
  /**
   * Milliseconds since the epoch, for what this module timestamps or expires itself (user creation,
   * expiry of stored provider records, log-in back-off). oidc-provider's own token times (iat, exp) use the system clock.
   */
  clock?: () => number;
  /** Trust X-Forwarded-Proto/-Host from a TLS-terminating proxy (secure cookies). Default false. */
  trustProxy?: boolean;
  /** Accounts the sign-up form creates in an hour, from every address together; 0: no limit. Default ALL_SIGNUPS_PER_HOUR. */
  signupsPerHour?: number;
  /** Pre-registered first-party clients, in addition to dynamically registered ones. */
  clients?: ClientMetadata[];
  /** Called with unexpected errors (provider server_error, interaction failures); default stderr. */
  onError?: (err: unknown) => void;
  /** Timeouts and connection cap of the listener (defaults: DEFAULT_LISTENER_LIMITS). */
  listenerLimits?: Partial<ListenerLimits>;
  /**
   * Peers whose PROXY protocol v2 header names the client (HPD_TRUSTED_PROXIES): the address the log-in
   * throttle, the sign-up limit and the registration limit key on.
   */
  trustedProxies?: TrustedProxies;
  /** /healthz and /readyz (src/observability/health-probes.ts); absent: the provider answers those paths. */
  health?: HealthProbes;
  /** The main thread's request counters (/metrics). */
  metrics?: RequestMetrics;
  accessLog?: AccessLog;
}

export interface AuthServer {
  /** The issuer, which is also the server's base URL. */
  readonly url: string;
  readonly port: number;
  /** Whether a grant still stands (revoked grants are deleted): how the MCP endpoint refuses its tokens. */
  grantActive(grantId: string): Promise<boolean>;
  /** Whether the access token `jti` was revoked at /token/revocation (access-token-revocation.ts). */
  accessTokenRevoked(jti: string): Promise<boolean>;
  /**
   * Stops listening, closes connections with nothing in flight, lets requests in flight finish for up
   * to `graceMs` (default DEFAULT_DRAIN_MS), closes the rest and oauth.mdb (not the user store, nor a
   * Redis connection passed in).
   */
  close(graceMs?: number): Promise<void>;
}

function stripOneSlash(value: string): string {
  return value.endsWith('/') ? value.slice(0, -1) : value;
}

// The option checks below guard the programmatic API: `hpd serve` refuses such values as settings
// first (serveConfig), so an InvariantError here means a caller skipped that.
function checkMcpResource(resource: string): void {
  const url = URL.parse(resource);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash !== '' || resource.includes('#')) {
    throw new InvariantError(`mcpResource must be an absolute http(s) URL without fragment, got "${resource}"`);
  }
}

function checkIssuer(issuer: string): void {
  const url = URL.parse(issuer);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== issuer) {
    throw new InvariantError(
      `issuer must be a bare http(s) origin without path or trailing slash (e.g. http://127.0.0.1:8082), got "${issuer}"`,
    );
  }
  if (url.port === '0') throw new InvariantError('issuer must name the port clients reach; omit issuer to derive it from the bound port');
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function defaultOnError(err: unknown): void {
  process.stderr.write(`auth server error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

/**
 * Starts the authorization server and resolves once it listens.
 *
 * @example
 * const auth = await startAuthServer({ port: 0, mcpResource: 'http://127.0.0.1:8081', store, stateDir: 'var' });
 * // auth.url === 'http://127.0.0.1:<port>'; discovery at `${auth.url}/.well-known/oauth-authorization-server`
 * await auth.close();
 */
export async function startAuthServer(opts: AuthServerOptions): Promise<AuthServer> {
  checkMcpResource(opts.mcpResource);
  if (opts.issuer !== undefined) checkIssuer(opts.issuer);
  const accessTokenTtl = opts.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS;
  if (!Number.isSafeInteger(accessTokenTtl) || accessTokenTtl <= 0)
    throw new InvariantError(`accessTokenTtlSeconds must be a positive integer, got ${accessTokenTtl}`);
  const clock = opts.clock ?? Date.now;
  const onError = opts.onError ?? defaultOnError;
  const host = opts.host ?? '127.0.0.1';
  const { store, mcpResource, redis } = opts;

  const secrets: AuthSecrets =
    redis === undefined ? await loadOrCreateAuthSecrets(opts.stateDir) : await loadOrCreateRedisAuthSecrets(redis);
  const oauth: OAuthStore = expireUnusedClients(
    redis === undefined ? openOAuthStore(join(opts.stateDir, OAUTH_FILE), clock) : openRedisOAuthStore(redis, { clock }),
  );

  let handler: RequestHandler | undefined;
  const listener = frontListener(opts, () => handler);
  const server = listener.server;
  let sweepTimer: NodeJS.Timeout | undefined;

  try {
    // Redis expires records itself.
    if (redis === undefined) await oauth.sweep();
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error): void => reject(toListenError('auth', host, opts.port, err));
      server.once('error', failed);
      server.listen(opts.port, host, () => {
        server.off('error', failed);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const issuer = opts.issuer ?? `http://${hostForUrl(host)}:${port}`;

    // SDK clients send `new URL(resource).href`, which adds a slash to a bare origin: accept exactly
    // the configured identifier with or without one trailing slash, nothing else.
    const isMcpResource = (indicator: string): boolean => stripOneSlash(indicator) === stripOneSlash(mcpResource);
    const scopes = [...OAUTH_SCOPES];
    const trustProxy = opts.trustProxy === true;
    const { provider, accessTokens } = await createProvider({
      issuer,
      mcpResource,
      isMcpResource,
      scopes,
      accessTokenTtl,
      store,
      oauth,
      secrets,
      clients: opts.clients ?? [],
      trustProxy,
      onError,
    });
    const interactions: InteractionContext = {
      provider,
      store,
      mcpResource,
      resourceScopes: scopes,
      supportedScopes: scopes,
      isMcpResource,
      clock,
      // Shared with the other instances when they share a Redis: else each would grant its own tries.
      throttle: redis === undefined ? new LoginThrottle(clock) : new RedisLoginThrottle(redis, { clock, onError }),
      signups: createSignupLimit(clock, opts.signupsPerHour ?? ALL_SIGNUPS_PER_HOUR, redis),
      onError,
    };
    // Shared with the other instances when they share a Redis: the server-wide limit is a total.
    const registrations = redis === undefined ? createRegistrationLimit(clock) : createRedisRegistrationLimit(redis, { clock });
    handler = createRoutes(provider, interactions, registrations, onError, () => store.health());

    if (redis === undefined) {
      sweepTimer = setInterval(() => {
        oauth.sweep().catch(onError);
      }, SWEEP_INTERVAL_MS);
      sweepTimer.unref();
    }

    let closing: Promise<void> | undefined;
    return {
      url: issuer,
      grantActive: async (grantId) => (await oauth.adapterFor('Grant').find(grantId)) !== undefined,
      accessTokenRevoked: (jti) => accessTokens.isRevoked(jti),
      port,
      close(graceMs = DEFAULT_DRAIN_MS): Promise<void> {
        closing ??= (async () => {
          opts.health?.drain();
          clearInterval(sweepTimer);
          await listener.close(graceMs);
          await oauth.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    clearInterval(sweepTimer);
    if (server.listening) await listener.close(0);
    await oauth.close();
    throw err;
  }
}

/**
 * The node:http listener in front of the provider: observation, a 400 for a target Koa cannot parse,
 * the health probes, and 503 until the routes exist (the provider is configured after listening,
 * because a derived issuer needs the bound port).
 */
function frontListener(opts: AuthServerOptions, routes: () => RequestHandler | undefined): NodeListener {
  const observe = createNodeRequestObserver('auth', (p) => p, opts.metrics, opts.accessLog);
  return createNodeListener(
    'auth',
    (req: IncomingMessage, res: ServerResponse) => {
      observe?.(req, res);
      const path = requestPath(req.url ?? '/');
      // Koa's URL parser throws on targets such as `http://[`: a 500 and a stack in the log per request.
      if (path === undefined) {
        const body = JSON.stringify({ error: 'invalid_request', error_description: 'the request target is not a valid URL' });
        res
          .writeHead(400, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(body),
            'cache-control': 'no-store',
          })
          .end(body);
        return;
      }
      if (opts.health?.answer(req, res, path) === true) return;
      const handler = routes();
      if (handler !== undefined) {
        handler(req, res);
        return;
      }
      res.writeHead(503, { 'retry-after': '1' }).end();
    },
    opts.listenerLimits,
    opts.trustedProxies,
  );
}
