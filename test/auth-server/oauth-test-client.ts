/**
 * @module A headless OAuth client for the auth-server tests: a real server on port 0 over a temporary
 * state directory, a tiny cookie jar, dynamic registration, PKCE, and a browser stand-in that follows
 * redirects by hand (`redirect: 'manual'`) until the client's redirect_uri is reached.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startAuthServer, type AuthServer, type AuthServerOptions } from '../../src/auth-server/index.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';

export const MCP_RESOURCE = 'http://127.0.0.1:8081';
/** Never contacted: the browser stand-in stops when a redirect points here. */
export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/**
 * Cleanup for one test, run last-in first-out in a single after hook (node:test runs separate hooks in
 * registration order), so servers close before stores, and stores before their directory goes.
 */
export function cleanup(t: TestContext): (fn: () => unknown) => void {
  const stack: Array<() => unknown> = [];
  t.after(async () => {
    for (let fn = stack.pop(); fn !== undefined; fn = stack.pop()) await fn();
  });
  return (fn) => stack.push(fn);
}

export interface Fixture {
  dir: string;
  store: StateStore;
  server: AuthServer;
  defer: (fn: () => unknown) => void;
  /** Starts another server on the same state directory and store (after `server.close()`). */
  restart(overrides?: Partial<AuthServerOptions>): Promise<AuthServer>;
}

/** A state directory, an LMDB user store and a running auth server, all cleaned up after the test. */
export async function startFixture(t: TestContext, overrides: Partial<AuthServerOptions> = {}): Promise<Fixture> {
  const defer = cleanup(t);
  const dir = mkdtempSync(join(tmpdir(), 'hpd-auth-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const store = openLmdbStateStore(dir);
  defer(() => store.close());
  const start = async (more: Partial<AuthServerOptions>): Promise<AuthServer> => {
    const server = await startAuthServer({
      port: 0,
      mcpResource: MCP_RESOURCE,
      store,
      stateDir: dir,
      onError: (err) => t.diagnostic(`auth server error: ${String(err)}`),
      ...overrides,
      ...more,
    });
    defer(() => server.close());
    return server;
  };
  const server = await start({});
  return { dir, store, server, defer, restart: start };
}

/** Keeps cookies by name (path and domain ignored: one host, and each flow uses its own jar). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v = ''] = a.split('=');
        const key = k.trim().toLowerCase();
        return (key === 'expires' && Date.parse(v) <= Date.now()) || (key === 'max-age' && Number(v) <= 0);
      });
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return Array.from(this.#cookies, ([k, v]) => `${k}=${v}`).join('; ');
  }

  names(): string[] {
    return [...this.#cookies.keys()];
  }
}

/** fetch with the jar: sends its cookies, keeps the ones set, never follows redirects. */
export async function browse(
  jar: CookieJar,
  url: string,
  init: { method?: string; form?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/html' };
  const cookie = jar.header();
  if (cookie !== '') headers.cookie = cookie;
  let body: string | undefined;
  if (init.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, redirect: 'manual' });
  jar.store(res);
  return res;
}

/** Absolute Location of a redirect response. */
export function location(res: Response, base: string): string {
  const loc = res.headers.get('location');
  if (loc === null) throw new Error(`expected a redirect, got ${res.status}`);
  return new URL(loc, base).href;
}

export interface Registered {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  [key: string]: unknown;
}

/** Registers a public client the way MCP SDK clients do. */
export async function registerClient(issuer: string, extra: Record<string, unknown> = {}): Promise<Registered> {
  const res = await fetch(`${issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test MCP Client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    }),
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Registered;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface AuthorizeParams {
  clientId: string;
  challenge?: string | null;
  method?: string | null;
  /** null omits the parameter. */
  resource?: string | null;
  scope?: string | null;
  state?: string;
  extra?: Record<string, string>;
}

export function authorizeUrl(issuer: string, p: AuthorizeParams): string {
  const q = new URLSearchParams({ response_type: 'code', client_id: p.clientId, redirect_uri: REDIRECT_URI, state: p.state ?? 'st-123' });
  const scope = p.scope === undefined ? 'openid offline_access' : p.scope;
  if (scope !== null) q.set('scope', scope);
  const resource = p.resource === undefined ? MCP_RESOURCE : p.resource;
  if (resource !== null) q.set('resource', resource);
  if (p.challenge !== null && p.challenge !== undefined) q.set('code_challenge', p.challenge);
  const method = p.method === undefined ? 'S256' : p.method;
  if (method !== null) q.set('code_challenge_method', method);
  for (const [k, v] of Object.entries(p.extra ?? {})) q.set(k, v);
  return `${issuer}/auth?${q.toString()}`;
}

/**
 * Follows redirects from `res` until one points at the client's redirect_uri (returned as a URL) or a
 * response is not a redirect (returned as is).
 */
export async function followToCallback(jar: CookieJar, res: Response, base: string): Promise<URL | Response> {
  let current = res;
  for (let hops = 0; hops < 10; hops += 1) {
    if (current.status < 300 || current.status >= 400) return current;
    const next = location(current, base);
    if (next.startsWith(REDIRECT_URI)) return new URL(next);
    current = await browse(jar, next);
  }
  throw new Error('too many redirects');
}

/**
 * The page shown instead of an error redirect to a dynamically registered client: checks it is a 400
 * HTML page with no Location, and returns where its "Continue" link leads (the error for the client).
 */
export async function refusalPage(res: Response): Promise<{ html: string; continueTo: URL | undefined }> {
  if (res.status !== 400) throw new Error(`expected the refusal page (400), got ${res.status} ${res.headers.get('location') ?? ''}`);
  if (res.headers.get('location') !== null) throw new Error(`the refusal page redirects to ${res.headers.get('location')}`);
  if (!(res.headers.get('content-type') ?? '').startsWith('text/html')) throw new Error('the refusal page is not HTML');
  const html = await res.text();
  if (!html.includes('<h1>Request refused</h1>')) throw new Error(`not the refusal page: ${html.slice(0, 300)}`);
  const href = /<a id="continue" href="([^"]*)"/.exec(html)?.[1];
  const unescaped = href?.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
  return { html, continueTo: unescaped === undefined ? undefined : new URL(unescaped) };
}

/** Starts an authorization and returns the interaction page URL (after checking it rendered). */
export async function openInteraction(jar: CookieJar, issuer: string, p: AuthorizeParams): Promise<{ url: string; html: string }> {
  const res = await browse(jar, authorizeUrl(issuer, p));
  if (res.status !== 303 && res.status !== 302) throw new Error(`authorization did not redirect: ${res.status} ${await res.text()}`);
  const url = location(res, issuer);
  if (!new URL(url).pathname.startsWith('/interaction/')) throw new Error(`authorization redirected elsewhere: ${url}`);
  const page = await browse(jar, url);
  if (page.status !== 200) throw new Error(`interaction page: ${page.status}`);
  return { url, html: await page.text() };
}

/** Signs up (or logs in) on the interaction page and follows through to the callback. */
export async function submitAndFollow(
  jar: CookieJar,
  issuer: string,
  interactionUrl: string,
  action: 'signup' | 'login' | 'confirm' | 'abort',
  form: Record<string, string> = {},
): Promise<URL> {
  const res = await browse(jar, `${interactionUrl}/${action}`, { method: 'POST', form });
  const out = await followToCallback(jar, res, issuer);
  if (!(out instanceof URL)) throw new Error(`flow stopped at ${out.status}: ${(await out.text()).slice(0, 500)}`);
  return out;
}

export interface TokenResponse {
  access_token?: string;
  refresh_token?: string;
  id_token?: string;
  token_type?: string;
  expires_in?: number;
  scope?: string;
  error?: string;
  error_description?: string;
}

export async function tokenRequest(issuer: string, params: Record<string, string>): Promise<{ status: number; body: TokenResponse }> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: (await res.json()) as TokenResponse };
}

/** Registration + PKCE authorization + sign-up (new account) or log-in + code exchange, in one call. */
export async function fullFlow(
  issuer: string,
  opts: { email: string; password: string; mode: 'signup' | 'login'; client?: Registered; jar?: CookieJar; resource?: string | null },
): Promise<{ client: Registered; tokens: TokenResponse; jar: CookieJar; callback: URL }> {
  const client = opts.client ?? (await registerClient(issuer));
  const jar = opts.jar ?? new CookieJar();
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, issuer, { clientId: client.client_id, challenge, resource: opts.resource });
  const form: Record<string, string> =
    opts.mode === 'signup'
      ? { email: opts.email, password: opts.password, confirm: opts.password }
      : { email: opts.email, password: opts.password };
  const callback = await submitAndFollow(jar, issuer, url, opts.mode, form);
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${callback.href}`);
  const params: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  };
  if (opts.resource !== null) params.resource = opts.resource ?? MCP_RESOURCE;
  const { status, body } = await tokenRequest(issuer, params);
  if (status !== 200) throw new Error(`token request failed: ${status} ${JSON.stringify(body)}`);
  return { client, tokens: body, jar, callback };
}

/** The decoded JSON of a JWT part (0 = header, 1 = payload), without verification. */
export function jwtPart(token: string, part: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[part], 'base64url').toString('utf8')) as Record<string, unknown>;
}
