/**
 * Narrow local typings for oidc-provider 9.13.3, which ships JavaScript only (there is no
 * @types/oidc-provider for v9). Only the surface the embedded authorization server uses is declared,
 * with the shapes read from the library's source (lib/provider.js, lib/helpers/defaults.js,
 * lib/models/*.js); everything else stays unreachable from TypeScript on purpose, so a use of an
 * undeclared option is a compile error rather than a silent `any`.
 *
 * This is an ambient (script) declaration file: no top-level import or export.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type JsonObject = { [key: string]: unknown };

  /** The part of Koa's context (koa 3) that configuration callbacks touch. */
  export interface KoaContext {
    readonly method: string;
    readonly path: string;
    readonly query: JsonObject;
    /** The provider's per-request context; present on its routes. */
    readonly oidc?: OidcContextView;
    status: number;
    body: unknown;
    type: string;
    get(field: string): string;
    set(field: string, value: string): void;
    remove(field: string): void;
    /** The first of `types` the request's Accept header prefers, or false. */
    accepts(...types: string[]): string | false;
  }

  /** The part of the provider's request context (ctx.oidc) read by the error-redirect guard. */
  export interface OidcContextView {
    /** The matched route's name: 'authorization', 'resume', 'token', … */
    readonly route?: string;
    readonly client?: Client;
    /** The recognised request parameters, once assembled. */
    readonly params?: JsonObject;
    /** The parsed body of a POST, before parameters are assembled. */
    readonly body?: JsonObject;
  }

  /** A registered client as the provider models it (camel-cased metadata). */
  export interface Client {
    readonly clientId: string;
    readonly clientName?: string;
    readonly clientAuthMethod: string;
    readonly applicationType: string;
    readonly redirectUris: readonly string[];
    grantTypeAllowed(grantType: string): boolean;
    /** Whether `uri` is one of the registered redirect URIs (loopback ports ignored for native clients). */
    redirectUriAllowed(uri: string): boolean;
  }

  /** Client metadata (RFC 7591 names) for statically configured clients. */
  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    client_name?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    application_type?: 'web' | 'native';
    scope?: string;
  }

  /** What an access token looks like to `extraTokenClaims` and the revocation policy. */
  export interface TokenView {
    readonly kind: string;
    readonly accountId?: string;
    readonly clientId?: string;
    readonly grantId?: string;
  }

  export interface Grant {
    readonly jti?: string;
    readonly accountId?: string;
    readonly clientId?: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    /** Resolves to the grant id. */
    save(): Promise<string>;
  }

  export interface GrantConstructor {
    new (init: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }

  export interface ClientModel {
    find(id: string): Promise<Client | undefined>;
  }

  export interface PromptDetails {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: { [indicator: string]: string[] };
  }

  /** A pending interaction (provider.interactionDetails). */
  export interface Interaction {
    readonly uid: string;
    readonly prompt: { name: string; reasons: string[]; details: PromptDetails };
    /** The authorization request parameters as received (resource may repeat). */
    readonly params: {
      client_id?: string;
      redirect_uri?: string;
      scope?: string;
      resource?: string | string[];
      [name: string]: unknown;
    };
    /** Present when the browser already has a login session. */
    readonly session?: { accountId: string; uid?: string };
    readonly grantId?: string;
    readonly returnTo: string;
    readonly exp: number;
  }

  export interface InteractionResults {
    login?: { accountId: string; amr?: string[]; remember?: boolean };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  /** One stored model instance as handed to an adapter. */
  export interface AdapterPayload {
    grantId?: string;
    uid?: string;
    userCode?: string;
    jti?: string;
    consumed?: number;
    [key: string]: unknown;
  }

  /** The storage interface oidc-provider drives for every model (Session, Grant, Client, …). */
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string, claims: JsonObject, rejected: string[]): JsonObject | Promise<JsonObject>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
    jwt?: { sign?: { alg: string; kid?: string } };
  }

  /** The error body the provider renders (`error`, `error_description`, maybe `state`). */
  export interface ErrorOut {
    error: string;
    error_description?: string;
    state?: string;
    scope?: string;
  }

  export type CookieOptions = { httpOnly?: boolean; sameSite?: 'lax' | 'strict' | 'none'; secure?: boolean };

  export interface Configuration {
    adapter?: (modelName: string) => Adapter;
    clients?: ClientMetadata[];
    clientDefaults?: Partial<Omit<ClientMetadata, 'client_id' | 'redirect_uris'>> & { id_token_signed_response_alg?: string };
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: KoaContext, origin: string, client: Client) => boolean;
    claims?: { [scope: string]: string[] | null };
    conformIdTokenClaims?: boolean;
    cookies?: { keys?: string[]; long?: CookieOptions; short?: CookieOptions; names?: { session?: string; interaction?: string; resume?: string } };
    /**
     * `validator` runs synchronously for every listed property, present or not, before the provider's
     * own schema checks, for registered and configured clients alike; it rejects by throwing.
     */
    extraClientMetadata?: { properties: string[]; validator: (ctx: KoaContext | undefined, key: string, value: unknown, metadata: JsonObject) => void };
    extraTokenClaims?: (ctx: KoaContext | undefined, token: TokenView) => Promise<JsonObject | undefined>;
    features?: {
      devInteractions?: { enabled: boolean };
      dPoP?: { enabled: boolean };
      pushedAuthorizationRequests?: { enabled: boolean };
      rpInitiatedLogout?: { enabled: boolean };
      userinfo?: { enabled: boolean };
      introspection?: { enabled: boolean };
      registration?: { enabled: boolean; initialAccessToken?: boolean; issueRegistrationAccessToken?: boolean };
      revocation?: { enabled: boolean; allowedPolicy?: (ctx: KoaContext, client: Client, token: TokenView) => Promise<boolean> };
      resourceIndicators?: {
        enabled: boolean;
        defaultResource?: (ctx: KoaContext, client: Client, oneOf?: string[]) => Promise<string | string[] | undefined>;
        useGrantedResource?: (ctx: KoaContext, model: JsonObject) => Promise<boolean>;
        getResourceServerInfo?: (ctx: KoaContext, resourceIndicator: string, client: Client) => Promise<ResourceServerInfo>;
      };
    };
    findAccount?: (ctx: KoaContext | undefined, sub: string, token?: TokenView) => Promise<Account | undefined>;
    interactions?: { url?: (ctx: KoaContext, interaction: { uid: string }) => Promise<string> };
    jwks?: { keys: JsonObject[] };
    pkce?: { required?: (ctx: KoaContext, client: Client) => boolean };
    renderError?: (ctx: KoaContext, out: ErrorOut, error: Error) => Promise<void>;
    responseTypes?: string[];
    rotateRefreshToken?: boolean | ((ctx: KoaContext) => boolean | Promise<boolean>);
    routes?: { [name: string]: string };
    scopes?: string[];
    ttl?: {
      AccessToken?: number;
      AuthorizationCode?: number;
      Grant?: number;
      IdToken?: number;
      Interaction?: number;
      RefreshToken?: number;
      Session?: number;
    };
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    /** Koa's flag: trust X-Forwarded-* headers (TLS-terminating proxy). */
    proxy: boolean;
    readonly Grant: GrantConstructor;
    readonly Client: ClientModel;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** Koa middleware run around the provider's routes (its error handlers run inside them). */
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }

  export default Provider;

  /** Errors thrown by the provider carry the OAuth error code and description. */
  export class OIDCProviderError extends Error {
    readonly error: string;
    readonly error_description?: string;
    readonly status: number;
    readonly expose: boolean;
    /** Whether the authorization endpoint may send this error to the client's redirect_uri. */
    allow_redirect: boolean;
  }

  export const errors: {
    readonly OIDCProviderError: typeof OIDCProviderError;
    readonly InvalidTarget: new (description?: string) => OIDCProviderError;
    /** A description starting with "redirect_uris" makes the error code invalid_redirect_uri. */
    readonly InvalidClientMetadata: new (description: string) => OIDCProviderError;
    readonly SessionNotFound: new (description?: string) => OIDCProviderError;
  };
}
