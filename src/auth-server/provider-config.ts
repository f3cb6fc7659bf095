/**
 * @module The oidc-provider configuration of the authorization server: clients and their defaults,
 * the MCP resource and its JWT access tokens, the features turned on and off, the lifetimes, and the
 * provider's own error page. What each choice means for a client is listed in server.ts's module notes.
 */
import Provider, { errors, type ClientMetadata, type Configuration, type KoaContext } from 'oidc-provider';
import { InvariantError } from '../invariant.ts';
import type { StateStore } from '../policy/state-store.ts';
import { createAccessTokenRevocation, markStructuredTokenRefusal, type AccessTokenRevocation } from './access-token-revocation.ts';
import { ErrorRedirectGuard } from './error-redirects.ts';
import type { OAuthStore } from './lmdb-adapter.ts';
import { PAGE_HEADERS, renderErrorPage, renderRefusedRequestPage } from './pages.ts';
import { redirectUrisProblem } from './redirect-uris.ts';
import { SIGNING_ALG, type AuthSecrets } from './secrets.ts';
import { markIfRedisUnavailable, unavailableMiddleware } from './unavailable.ts';

const DAY = 24 * 60 * 60;

/** Chosen lifetimes in seconds; see server.ts's module notes. */
export const LIFETIMES = Object.freeze({
  authorizationCode: 60,
  idToken: 60 * 60,
  interaction: 60 * 60,
  session: 14 * DAY,
  refreshToken: 30 * DAY,
  grant: 365 * DAY,
});

/** The provider's route paths (its defaults, fixed here because docs/compatibility.md#oauth-for-the-mcp-endpoint names them). */
export const ROUTES = Object.freeze({
  authorization: '/auth',
  token: '/token',
  registration: '/reg',
  jwks: '/jwks',
  revocation: '/token/revocation',
});

export interface ProviderSettings {
  readonly issuer: string;
  /** The MCP resource identifier: the access-token audience. */
  readonly mcpResource: string;
  /** Tells whether a resource indicator names the MCP resource (one trailing slash tolerated). */
  readonly isMcpResource: (indicator: string) => boolean;
  readonly scopes: string[];
  readonly accessTokenTtl: number;
  readonly store: StateStore;
  readonly oauth: OAuthStore;
  readonly secrets: AuthSecrets;
  /** Pre-registered first-party clients. */
  readonly clients: ClientMetadata[];
  readonly trustProxy: boolean;
  readonly onError: (err: unknown) => void;
}

/**
 * The configured provider, its event handlers attached and its pre-registered clients checked, and
 * the revocation of its access tokens (access-token-revocation.ts).
 * @throws InvariantError naming the first pre-registered client the provider refuses.
 */
export async function createProvider(s: ProviderSettings): Promise<{ provider: Provider; accessTokens: AccessTokenRevocation }> {
  const errorRedirects = new ErrorRedirectGuard(s.clients.map((c) => c.client_id));
  const provider = new Provider(s.issuer, providerConfiguration(s, errorRedirects));
  provider.proxy = s.trustProxy;
  const accessTokens = createAccessTokenRevocation({ issuer: s.issuer, signingKeys: s.secrets.signingKeys, oauth: s.oauth });
  // Outermost, so that it can turn a failed revocation record into the 503 of a Redis outage.
  provider.use(unavailableMiddleware);
  provider.use((ctx, next) => accessTokens.middleware(ctx, next));
  provider.on('revocation.error', markStructuredTokenRefusal);
  // Redis unreachable or failing over: a 503 (unavailable.ts), and no stack trace per request (the
  // Redis link logs each change of state once).
  provider.on('server_error', (ctx: unknown, err: unknown) => {
    if (!markIfRedisUnavailable(ctx, err)) s.onError(err);
  });
  provider.on('error', (err: unknown) => s.onError(err));
  provider.on('authorization.error', errorRedirects.onAuthorizationError);
  provider.on('server_error', errorRedirects.onAuthorizationError);
  // The provider validates static clients lazily, on first use; a typo should stop startup instead.
  // Pre-registered clients come from code (no setting configures them): a bad one is the caller's bug.
  for (const client of s.clients) {
    let reason: string | null = null;
    try {
      if ((await provider.Client.find(client.client_id)) === undefined) reason = 'not found after configuration';
    } catch (err) {
      reason = err instanceof errors.OIDCProviderError ? (err.error_description ?? err.error) : (err as Error).message;
    }
    if (reason !== null) throw new InvariantError(`pre-registered client "${client.client_id}" is invalid: ${reason}`);
  }
  return { provider, accessTokens };
}

function providerConfiguration(s: ProviderSettings, errorRedirects: ErrorRedirectGuard): Configuration {
  const { store, secrets } = s;
  return {
    adapter: (model) => s.oauth.adapterFor(model),
    clients: s.clients,
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
    // The grant the token was issued under (`gid`): the MCP endpoint refuses a token whose grant has
    // been revoked (credentials.ts), instead of honouring it until it expires. No `tier`: the MCP
    // endpoint reads the current tier on every request, and a claim minted before `hpd users set-tier`
    // would only mislead whoever decodes the token.
    extraTokenClaims: async (_ctx, token) => (typeof token.grantId === 'string' ? { gid: token.grantId } : {}),
    features: providerFeatures(s),
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
    scopes: s.scopes,
    ttl: {
      AccessToken: s.accessTokenTtl,
      AuthorizationCode: LIFETIMES.authorizationCode,
      Grant: LIFETIMES.grant,
      IdToken: LIFETIMES.idToken,
      Interaction: LIFETIMES.interaction,
      RefreshToken: LIFETIMES.refreshToken,
      Session: LIFETIMES.session,
    },
  };
}

function providerFeatures(s: ProviderSettings): NonNullable<Configuration['features']> {
  const { mcpResource } = s;
  return {
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
      // This covers refresh tokens; access tokens (JWTs) are revoked by access-token-revocation.ts.
      allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
    },
    resourceIndicators: {
      enabled: true,
      // Requests without `resource` still get an MCP-audience JWT; the token endpoint uses the
      // resource granted at authorization (useGrantedResource) when it names none.
      defaultResource: async (_ctx, _client, oneOf) => oneOf?.[0] ?? mcpResource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (!s.isMcpResource(indicator)) throw new errors.InvalidTarget();
        return {
          scope: s.scopes.join(' '),
          audience: mcpResource,
          accessTokenTTL: s.accessTokenTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: SIGNING_ALG } },
        };
      },
    },
  };
}

/** Words for the provider's error codes on its own HTML error page (bad client, bad redirect_uri, …). */
export function errorPageFor(error: string): { title: string; message: string } {
  if (error === 'server_error')
    return {
      title: 'Something went wrong',
      message: 'The request could not be completed because of an error on our side. Try again in a moment.',
    };
  if (error === 'invalid_client' || error === 'invalid_redirect_uri' || error === 'unauthorized_client') {
    return {
      title: 'Unknown application',
      message:
        'The application that sent you here is not registered with this service, or asked to return to an address it did not register. Go back to it and connect again.',
    };
  }
  return {
    title: 'Cannot continue',
    message: 'The application that sent you here made a request this service cannot accept. Go back to it and try again.',
  };
}

async function renderProviderError(
  ctx: KoaContext,
  out: { error: string; error_description?: string },
  err: unknown,
  guard: ErrorRedirectGuard,
): Promise<void> {
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
