/**
 * @module The embedded OAuth 2.1 authorization server for the MCP endpoint (contract §8): oidc-provider
 * 9 on node:http, with this project's user registry as the account store, its own log-in / sign-up
 * page, and LMDB persistence in the state directory (or, with the `redis` option, Redis shared by
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
 *   client_id, scope, iat, exp, jti and `tier` (the user's tier when the token was minted); lifetime
 *   900 s by default
 * - refresh tokens: only with offline_access, opaque, rotated on every use (a reused one revokes the
 *   whole grant, per OAuth 2.1), each valid 30 days from its issue
 * - redirect URIs: https, or http on a loopback host, or (native apps) a reverse-domain private-use
 *   scheme (redirect-uris.ts); an erroneous /auth of a dynamically registered client is answered
 *   with a page and a "Continue" link, never a redirect (error-redirects.ts, RFC 9700 §4.11.2)
 *
 * Two request adjustments before the provider sees /auth (normalizeAuthorizationQuery): a missing
 * scope becomes the four supported scopes, and offline_access gets prompt=consent added, because
 * OpenID Connect otherwise drops it silently and plain OAuth 2.1 clients would get no refresh token.
 *
 * Lifetimes the contract does not fix (chosen here): authorization code 60 s, interaction 1 h, browser
 * login session 14 days, grant 365 days. The grant bounds a chain of rotated refresh tokens: a client
 * used at least once a month stays connected for a year, then the person logs in again.
 *
 * The issuer must be a bare origin (no path): routes are served at the root. Either pass it, or omit
 * it and the server derives `http://<host>:<bound port>` after listening (useful with port 0). Behind a
 * TLS-terminating proxy pass the public https origin as issuer and set `trustProxy`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import Provider, { errors, type ClientMetadata, type Configuration, type KoaContext } from 'oidc-provider';
import { toListenError } from '../http/listen-error.ts';
import { createNodeListener, DEFAULT_DRAIN_MS, type ListenerLimits } from '../http/node-listener.ts';
import { requestPath } from '../http/request-target.ts';
import type { StateStore } from '../policy/state-store.ts';
import { ErrorRedirectGuard } from './error-redirects.ts';
import { handleInteraction, INTERACTION_PATH, type InteractionAction, type InteractionContext } from './interactions.ts';
import { OAUTH_FILE, openOAuthStore, type OAuthStore } from './lmdb-adapter.ts';
import { LoginThrottle } from './login-throttle.ts';
import { PAGE_HEADERS, renderErrorPage, renderRefusedRequestPage } from './pages.ts';
import { openRedisOAuthStore } from './redis-adapter.ts';
import { RedisLoginThrottle } from './redis-login-throttle.ts';
import { redirectUrisProblem } from './redirect-uris.ts';
import { loadOrCreateRedisAuthSecrets } from './redis-secrets.ts';
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
import { loadOrCreateAuthSecrets, SIGNING_ALG, type AuthSecrets } from './secrets.ts';
import type { AccessLog } from '../observability/access-log.ts';
import type { HealthProbes } from '../observability/health-probes.ts';
import { createNodeRequestObserver } from '../observability/node-request-observer.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';


/**
 * Scope used when an authorization request carries none (RFC 6749 §3.3 lets the server pick a
 * default). Without it the provider would grant nothing and answer access_denied.
 */
export const DEFAULT_SCOPE = OAUTH_SCOPES.join(' ');

export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 900;

const DAY = 24 * 60 * 60;

/** Chosen lifetimes in seconds; see the module notes. */
export const LIFETIMES = Object.freeze({
  authorizationCode: 60,
  idToken: 60 * 60,
  interaction: 60 * 60,
  session: 14 * DAY,
  refreshToken: 30 * DAY,
  grant: 365 * DAY,
});

/** How often expired provider records are deleted from oauth.mdb. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** The provider's route paths (its defaults, fixed here because the contract names them). */
export const ROUTES = Object.freeze({
  authorization: '/auth',
  token: '/token',
  registration: '/reg',
  jwks: '/jwks',
  revocation: '/token/revocation',
});

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
  /** Pre-registered first-party clients, in addition to dynamically registered ones. */
  clients?: ClientMetadata[];
  /** Called with unexpected errors (provider server_error, interaction failures); default stderr. */
  onError?: (err: unknown) => void;
  /** Timeouts and connection cap of the listener (defaults: DEFAULT_LISTENER_LIMITS). */
  listenerLimits?: Partial<ListenerLimits>;
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

function checkMcpResource(resource: string): void {
  const url = URL.parse(resource);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash !== '' || resource.includes('#')) {
    throw new Error(`mcpResource must be an absolute http(s) URL without fragment, got "${resource}"`);
  }
}

function checkIssuer(issuer: string): void {
  const url = URL.parse(issuer);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== issuer) {
    throw new Error(`issuer must be a bare http(s) origin without path or trailing slash (e.g. http://127.0.0.1:8082), got "${issuer}"`);
  }
  if (url.port === '0') throw new Error('issuer must name the port clients reach; omit issuer to derive it from the bound port');
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function defaultOnError(err: unknown): void {
  process.stderr.write(`auth server error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

/** Words for the provider's error codes on its own HTML error page (bad client, bad redirect_uri, …). */
function errorPageFor(error: string): { title: string; message: string } {
  if (error === 'server_error') return { title: 'Something went wrong', message: 'The request could not be completed because of an error on our side. Try again in a moment.' };
  if (error === 'invalid_client' || error === 'invalid_redirect_uri' || error === 'unauthorized_client') {
    return { title: 'Unknown application', message: 'The application that sent you here is not registered with this service, or asked to return to an address it did not register. Go back to it and connect again.' };
  }
  return { title: 'Cannot continue', message: 'The application that sent you here made a request this service cannot accept. Go back to it and try again.' };
}

async function renderProviderError(ctx: KoaContext, out: { error: string; error_description?: string }, err: unknown, guard: ErrorRedirectGuard): Promise<void> {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  ctx.type = 'html';
  // prompt=none errors carry 303, meant for the redirect; a page without Location must not say so.
  if (ctx.status >= 300 && ctx.status < 400) ctx.status = 400;
  const refusal = guard.refusal(err, out);
  if (refusal !== undefined) {
    ctx.body = renderRefusedRequestPage({ ...refusal, code: out.error, description: out.error_description });
    return;
  }
  const page = errorPageFor(out.error);
  ctx.body = renderErrorPage({ ...page, code: out.error, description: out.error_description });
}

/**
 * Adjusts an authorization request's query before the provider sees it; undefined when unchanged.
 *
 * - No `scope` → DEFAULT_SCOPE (RFC 6749 §3.3 allows a server default; the provider would otherwise
 *   grant nothing and answer access_denied).
 * - `offline_access` without `prompt=consent` → `consent` is added to `prompt`. OpenID Connect (and so
 *   oidc-provider) silently drops offline_access unless consent is prompted for; the MCP SDK adds
 *   prompt=consent itself, other OAuth 2.1 clients do not know the rule and would never get a refresh
 *   token. Forcing the consent prompt only means the person sees this server's page on each such
 *   authorization (log in, or one "Allow" click when already signed in). `prompt=none` is left alone:
 *   it cannot be combined with consent, and offline_access is then dropped as OIDC specifies.
 *
 * Repeated parameters are left for the provider to reject.
 */
export function normalizeAuthorizationQuery(query: string): string | undefined {
  const params = new URLSearchParams(query);
  if (params.getAll('scope').length > 1 || params.getAll('prompt').length > 1) return undefined;
  let changed = false;
  if (!params.has('scope')) {
    params.set('scope', DEFAULT_SCOPE);
    changed = true;
  }
  const scopes = (params.get('scope') ?? '').split(' ');
  const prompts = (params.get('prompt') ?? '').split(' ').filter(Boolean);
  if (scopes.includes('offline_access') && !prompts.includes('consent') && !prompts.includes('none')) {
    params.set('prompt', [...prompts, 'consent'].join(' '));
    changed = true;
  }
  return changed ? params.toString() : undefined;
}

function setCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  res.setHeader('access-control-allow-origin', typeof origin === 'string' ? origin : '*');
  res.setHeader('vary', 'Origin');
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
  if (!Number.isSafeInteger(accessTokenTtl) || accessTokenTtl <= 0) throw new Error(`accessTokenTtlSeconds must be a positive integer, got ${accessTokenTtl}`);
  const clock = opts.clock ?? Date.now;
  const onError = opts.onError ?? defaultOnError;
  const host = opts.host ?? '127.0.0.1';
  const { store, mcpResource } = opts;

  const { redis } = opts;
  const secrets: AuthSecrets = redis === undefined ? await loadOrCreateAuthSecrets(opts.stateDir) : await loadOrCreateRedisAuthSecrets(redis);
  const oauth: OAuthStore = redis === undefined ? openOAuthStore(join(opts.stateDir, OAUTH_FILE), clock) : openRedisOAuthStore(redis, { clock });

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const observe = createNodeRequestObserver('auth', (p) => p, opts.metrics, opts.accessLog);
  const listener = createNodeListener(
    'auth',
    (req, res) => {
      observe?.(req, res);
      const path = requestPath(req.url ?? '/');
      // Koa's URL parser throws on targets such as `http://[`: a 500 and a stack in the log per request.
      if (path === undefined) {
        const body = JSON.stringify({ error: 'invalid_request', error_description: 'the request target is not a valid URL' });
        res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' }).end(body);
        return;
      }
      if (opts.health?.answer(req, res, path) === true) return;
      if (handler !== undefined) {
        handler(req, res);
        return;
      }
      res.writeHead(503, { 'retry-after': '1' }).end();
    },
    opts.listenerLimits,
  );
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
    const errorRedirects = new ErrorRedirectGuard((opts.clients ?? []).map((c) => c.client_id));

    const configuration: Configuration = {
      adapter: (model) => oauth.adapterFor(model),
      clients: opts.clients ?? [],
      clientDefaults: {
        // Registered clients may refresh unless they say otherwise; refresh tokens still need offline_access.
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        // RFC 7591's default; MCP clients register `none` explicitly.
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: SIGNING_ALG,
      },
      clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
      // Browser-based public clients may call the token endpoint from their redirect_uri origins.
      clientBasedCORS: (_ctx, origin, client) => {
        if (origin === 'null') return false;
        if (client.clientAuthMethod !== 'none') return false;
        return client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin);
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      // Listing a standard property is how a synchronous check of it runs before the provider's own
      // (https or loopback only, redirect-uris.ts); it applies to configured clients too.
      extraClientMetadata: {
        properties: ['redirect_uris'],
        validator: (_ctx, key, value, metadata) => {
          const problem = key === 'redirect_uris' ? redirectUrisProblem(value, metadata.application_type) : undefined;
          if (problem !== undefined) throw new errors.InvalidClientMetadata(problem);
        },
      },
      cookies: { keys: secrets.cookieKeys },
      extraTokenClaims: async (_ctx, token) => {
        // Read at minting time, so `hpd users set-tier` shows in the next token (contract §8).
        const user = token.accountId === undefined ? undefined : store.getUser(token.accountId);
        return user === undefined ? undefined : { tier: user.tier };
      },
      features: {
        devInteractions: { enabled: false },
        // The MCP server accepts Bearer tokens only; a DPoP-bound token would be refused there.
        dPoP: { enabled: false },
        pushedAuthorizationRequests: { enabled: false },
        // The provider's logout pages load external fonts; there is nothing to log out of but a cookie.
        rpInitiatedLogout: { enabled: false },
        // Every access token is a JWT for the MCP audience (defaultResource), which the userinfo
        // endpoint cannot accept; clients read sub and email from the ID token instead.
        userinfo: { enabled: false },
        introspection: { enabled: false },
        registration: { enabled: true, initialAccessToken: false },
        revocation: {
          enabled: true,
          // RFC 7009: a client may revoke only its own tokens; others get the usual 200 and no effect.
          allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
        },
        resourceIndicators: {
          enabled: true,
          // Requests without `resource` still get an MCP-audience JWT; the token endpoint uses the
          // resource granted at authorization (useGrantedResource) when it names none.
          defaultResource: async (_ctx, _client, oneOf) => oneOf?.[0] ?? mcpResource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx, indicator) => {
            if (!isMcpResource(indicator)) throw new errors.InvalidTarget();
            return {
              scope: scopes.join(' '),
              audience: mcpResource,
              accessTokenTTL: accessTokenTtl,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: SIGNING_ALG } },
            };
          },
        },
      },
      findAccount: async (_ctx, sub) => {
        const user = store.getUser(sub);
        if (user === undefined) return undefined;
        return {
          accountId: user.id,
          // Addresses are not verified by this service, and email_verified says so.
          claims: () => ({ sub: user.id, ...(user.email === undefined ? {} : { email: user.email, email_verified: false }) }),
        };
      },
      interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
      jwks: { keys: secrets.signingKeys },
      pkce: { required: () => true },
      renderError: async (ctx, out, err) => renderProviderError(ctx, out, err, errorRedirects),
      responseTypes: ['code'],
      rotateRefreshToken: true,
      routes: { ...ROUTES },
      scopes,
      ttl: {
        AccessToken: accessTokenTtl,
        AuthorizationCode: LIFETIMES.authorizationCode,
        Grant: LIFETIMES.grant,
        IdToken: LIFETIMES.idToken,
        Interaction: LIFETIMES.interaction,
        RefreshToken: LIFETIMES.refreshToken,
        Session: LIFETIMES.session,
      },
    };

    const provider = new Provider(issuer, configuration);
    provider.proxy = opts.trustProxy === true;
    provider.on('server_error', (_ctx: unknown, err: unknown) => onError(err));
    provider.on('error', (err: unknown) => onError(err));
    provider.on('authorization.error', errorRedirects.onAuthorizationError);
    provider.on('server_error', errorRedirects.onAuthorizationError);
    // The provider validates static clients lazily, on first use; a typo should stop startup instead.
    for (const client of opts.clients ?? []) {
      try {
        if ((await provider.Client.find(client.client_id)) === undefined) throw new Error('not found after configuration');
      } catch (err) {
        const reason = err instanceof errors.OIDCProviderError ? (err.error_description ?? err.error) : (err as Error).message;
        throw new Error(`pre-registered client "${client.client_id}" is invalid: ${reason}`);
      }
    }
    const koa = provider.callback();

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
      trustProxy: opts.trustProxy === true,
      onError,
    };

    handler = (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const pathname = q === -1 ? url : url.slice(0, q);
      const m = INTERACTION_PATH.exec(pathname);
      if (m !== null) {
        void handleInteraction(req, res, m[1], m[2] as InteractionAction | undefined, interactions);
        return;
      }
      if (pathname === ROUTES.registration) {
        // Registration is open to anyone, so letting browser-based clients (e.g. MCP Inspector) reach
        // it cross-origin grants nothing new; the provider sets no CORS headers there itself.
        setCors(req, res);
        if (req.method === 'OPTIONS') {
          res.writeHead(204, {
            'access-control-allow-methods': 'POST',
            'access-control-allow-headers': String(req.headers['access-control-request-headers'] ?? 'content-type'),
            'access-control-max-age': '3600',
          });
          res.end();
          return;
        }
      }
      if (pathname === ROUTES.authorization && req.method === 'GET') {
        const rewritten = normalizeAuthorizationQuery(q === -1 ? '' : url.slice(q + 1));
        if (rewritten !== undefined) req.url = `${pathname}?${rewritten}`;
      }
      koa(req, res).catch((err: unknown) => {
        onError(err);
        if (!res.headersSent) {
          const html = renderErrorPage(errorPageFor('server_error'));
          res.writeHead(500, { ...PAGE_HEADERS, 'content-length': String(Buffer.byteLength(html)) }).end(html);
        }
      });
    };

    if (redis === undefined) {
      sweepTimer = setInterval(() => {
        oauth.sweep().catch(onError);
      }, SWEEP_INTERVAL_MS);
      sweepTimer.unref();
    }

    let closing: Promise<void> | undefined;
    return {
      url: issuer,
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
