/**
 * @module An in-memory `OAuthClientProvider` for the MCP SDK client (what a desktop MCP client keeps in
 * its settings), and a browser stand-in that drives the authorization server's sign-in page with `fetch`
 * and a cookie jar, following redirects by hand until the client's redirect URI is reached.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { browse, CookieJar, location } from '../auth-server/oauth-test-client.ts';

export { CookieJar };

export const OAUTH_SCOPE = 'openid profile email offline_access';

/** Everything the SDK asks to keep, in fields tests can read; plus the URL it asked the user to open. */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUri: string;
  #clientInformation: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #codeVerifier: string | undefined;
  /** Every authorization URL the SDK asked to open, oldest first. */
  readonly authorizationUrls: URL[] = [];
  /** Every `state` handed to the SDK, newest last. */
  readonly states: string[] = [];
  /** Every token set saved, oldest first. */
  readonly savedTokens: OAuthTokens[] = [];

  constructor(redirectUri: string) {
    this.redirectUri = redirectUri;
  }

  get redirectUrl(): string {
    return this.redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'hpd OAuth flow test',
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: OAUTH_SCOPE,
    };
  }

  state(): string {
    const s = randomBytes(16).toString('base64url');
    this.states.push(s);
    return s;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#clientInformation;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#clientInformation = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
    this.savedTokens.push(tokens);
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#codeVerifier = verifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error('no code verifier saved');
    return this.#codeVerifier;
  }

  /** The latest authorization URL, failing when the SDK never asked for one. */
  lastAuthorizationUrl(): URL {
    const url = this.authorizationUrls.at(-1);
    if (url === undefined) throw new Error('the SDK never called redirectToAuthorization');
    return url;
  }
}

export interface InteractionResult {
  /** The redirect back to the client (its redirect URI with code and state). */
  callback: URL;
  /** The interaction page the person saw. */
  pageUrl: string;
  pageHtml: string;
}

/**
 * Opens `authorizationUrl` like a browser, fills the sign-up (new account) or log-in form found on the
 * interaction page, and follows redirects until one points at `redirectUri`.
 */
export async function completeInteraction(
  authorizationUrl: URL | string,
  redirectUri: string,
  form: { action: 'signup' | 'login'; email: string; password: string },
  jar: CookieJar = new CookieJar(),
): Promise<InteractionResult> {
  const follow = async (first: Response, from: string): Promise<{ res: Response; url: string } | { callback: URL }> => {
    let res = first;
    let url = from;
    for (let hops = 0; hops < 10; hops += 1) {
      if (res.status < 300 || res.status >= 400) return { res, url };
      const next = location(res, url);
      await res.arrayBuffer();
      if (next.startsWith(redirectUri)) return { callback: new URL(next) };
      url = next;
      res = await browse(jar, next);
    }
    throw new Error('too many redirects');
  };

  const start = String(authorizationUrl);
  const landed = await follow(await browse(jar, start), start);
  if ('callback' in landed) throw new Error(`the authorization finished without a sign-in page: ${landed.callback.href}`);
  const pageUrl = landed.url;
  const pageHtml = await landed.res.text();
  if (landed.res.status !== 200) throw new Error(`interaction page ${pageUrl}: ${landed.res.status} ${pageHtml.slice(0, 500)}`);
  // The form's own action, as a browser would submit it.
  const action = new RegExp(`<form method="post" action="([^"]*/${form.action})"`).exec(pageHtml)?.[1];
  if (action === undefined) throw new Error(`no ${form.action} form on ${pageUrl}`);
  const fields: Record<string, string> =
    form.action === 'signup'
      ? { email: form.email, password: form.password, confirm: form.password }
      : { email: form.email, password: form.password };
  const submitUrl = new URL(action, pageUrl).href;
  const submitted = await follow(await browse(jar, submitUrl, { form: fields }), submitUrl);
  if (!('callback' in submitted)) {
    throw new Error(
      `the ${form.action} form did not lead back to the client: ${submitted.res.status} ${(await submitted.res.text()).slice(0, 500)}`,
    );
  }
  return { callback: submitted.callback, pageUrl, pageHtml };
}
