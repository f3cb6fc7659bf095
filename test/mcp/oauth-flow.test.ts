/**
 * The full OAuth 2.1 flow from nothing, as an SDK-based MCP client (Claude Desktop, Inspector, …) runs
 * it against `startServices` (REST + MCP + embedded authorization server in one process): 401 →
 * protected-resource metadata → authorization-server metadata → dynamic registration → PKCE
 * authorization URL → sign-up on our page → code → `finishAuth` → tools with the access token; the tier
 * read per request; the daily count shared across a refresh; a later log-in from a fresh browser.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverAuthorizationServerMetadata, refreshAuthorization, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { setUserTier } from '../../src/policy/api-keys.ts';
import { completeInteraction, CookieJar, InMemoryOAuthProvider, OAUTH_SCOPE } from '../helpers/oauth-provider.ts';
import { decodeJwtPart, freePorts, startTestServices, type TestServices } from '../helpers/services.ts';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };

const EMAIL = `flow-${randomBytes(4).toString('hex')}@example.org`;
const PASSWORD = 'correct horse battery staple';
const LIMITS = { free: 5, pro: 20, enterprise: 100 } as const;

let svc: TestServices;
let redirectUri: string;
/** The SDK client's storage, shared by the tests below in order (they tell one story). */
let provider: InMemoryOAuthProvider;
let firstTransport: StreamableHTTPClientTransport;
let userId = '';
const clients: Client[] = [];

const stripSlash = (s: string): string => s.replace(/\/$/, '');
const problemOf = (r: ToolResult): Record<string, unknown> => {
  assert.equal(r.isError, true, `a tool error, got ${JSON.stringify(r).slice(0, 300)}`);
  return JSON.parse(r.content[0]!.text!) as Record<string, unknown>;
};
const okResult = (r: ToolResult, what: string): Record<string, unknown> => {
  assert.notEqual(r.isError, true, `${what} failed: ${r.content[0]?.text}`);
  assert.ok(r.structuredContent !== undefined, `${what} has structuredContent`);
  return r.structuredContent;
};

/** A new Client over a new transport that authenticates with `auth`'s tokens. */
async function connect(auth: InMemoryOAuthProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'hpd-oauth-flow-test', version: '1.0.0' });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(svc.mcpUrl), { authProvider: auth });
  await client.connect(transport);
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

before(async () => {
  svc = await startTestServices({ limits: LIMITS });
  const [callbackPort] = (await freePorts(1)) as [number];
  // Nothing listens here: the browser stand-in stops at the redirect and reads the code from it.
  redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
  provider = new InMemoryOAuthProvider(redirectUri);
});

after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await svc?.close();
});

describe('MCP OAuth flow end to end with the SDK client', () => {
  test('an unauthenticated connect discovers, registers and asks to open a PKCE S256 authorization URL for the MCP resource', async () => {
    const client = new Client({ name: 'hpd-oauth-flow-test', version: '1.0.0' });
    clients.push(client);
    firstTransport = new StreamableHTTPClientTransport(new URL(svc.mcpUrl), { authProvider: provider });
    await assert.rejects(client.connect(firstTransport), (err: unknown) => {
      assert.ok(err instanceof UnauthorizedError, `expected UnauthorizedError, got ${String(err)}`);
      return true;
    });

    // Dynamic registration happened and was stored.
    const info = provider.clientInformation();
    assert.ok(info !== undefined, 'the SDK registered a client');
    assert.match(info.client_id, /\S/);

    const url = provider.lastAuthorizationUrl();
    assert.equal(provider.authorizationUrls.length, 1);
    const meta = (await (await fetch(`${svc.authUrl}/.well-known/oauth-authorization-server`)).json()) as {
      authorization_endpoint: string;
    };
    assert.equal(`${url.origin}${url.pathname}`, meta.authorization_endpoint, 'the endpoint from the AS metadata');
    const q = url.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), info.client_id);
    assert.equal(q.get('redirect_uri'), redirectUri);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/, 'a base64url SHA-256 challenge');
    assert.equal(stripSlash(q.get('resource') ?? ''), stripSlash(svc.mcpUrl), 'resource = the MCP URL');
    assert.deepEqual((q.get('scope') ?? '').split(' ').sort(), OAUTH_SCOPE.split(' ').sort());
    assert.equal(q.get('state'), provider.states.at(-1));
    assert.equal(provider.tokens(), undefined, 'no tokens yet');
  });

  test('sign-up on the page → code → finishAuth → a new client lists and calls tools as a Free user', async () => {
    const { callback, pageHtml } = await completeInteraction(provider.lastAuthorizationUrl(), redirectUri, {
      action: 'signup',
      email: EMAIL,
      password: PASSWORD,
    });
    assert.match(pageHtml, /Create an account/);
    assert.match(pageHtml, /hpd OAuth flow test/, 'the page names the client');
    assert.equal(callback.searchParams.get('error'), null, callback.href);
    const code = callback.searchParams.get('code');
    assert.ok(code !== null && code !== '', `a code in ${callback.href}`);
    const state = callback.searchParams.get('state');
    if (state !== null) assert.equal(state, provider.states.at(-1), 'state round-trips');
    assert.equal(callback.searchParams.get('iss'), svc.authUrl, 'RFC 9207 iss on the redirect');

    await firstTransport.finishAuth(code);
    const tokens = provider.tokens();
    assert.ok(tokens !== undefined, 'tokens saved');
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(typeof tokens.refresh_token, 'string', 'offline_access gives a refresh token');

    const { client } = await connect(provider);
    const { tools } = await client.listTools();
    assert.equal(tools.length, 13);
    assert.ok(tools.some((x) => x.name === 'get_plan_details'));

    const years = okResult(await call(client, 'list_plan_years'), 'list_plan_years');
    assert.deepEqual(years.available_years, [2025]);

    const search = okResult(await call(client, 'search_plans', { zip: '77002', age: 40 }), 'search_plans');
    const plans = (search._embedded as { plans: Array<{ id: string }> }).plans;
    assert.ok(plans.length > 0, 'plans at 77002');

    const refused = problemOf(await call(client, 'get_plan_details', { plan_id: plans[0]!.id }));
    assert.equal(refused.status, 402);
    assert.equal(refused.required_tier, 'pro');
  });

  test('the access token is an RS256 JWT for the MCP URL, naming the new user', () => {
    const access = provider.tokens()!.access_token;
    assert.equal(access.split('.').length, 3, 'a JWT, not an opaque token');
    const header = decodeJwtPart(access, 0);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.typ, 'at+jwt');
    assert.equal(typeof header.kid, 'string');
    const payload = decodeJwtPart(access, 1);
    assert.equal(payload.aud, svc.mcpUrl);
    assert.equal(payload.iss, svc.authUrl);
    assert.equal(payload.client_id, provider.clientInformation()!.client_id);
    assert.equal(payload.tier, undefined, 'no tier claim: the tier is read per request');
    assert.ok(typeof payload.exp === 'number' && typeof payload.iat === 'number');
    assert.equal(typeof payload.sub, 'string');
    userId = payload.sub as string;
    const user = svc.services.store.getUser(userId);
    assert.ok(user !== undefined, 'sub is a stored user');
    assert.equal(user.email, EMAIL);
    assert.equal(user.tier, 'free');
  });

  test('an upgrade through the policy API takes effect on the next call with the same token (tier read per request)', async () => {
    await setUserTier(svc.services.store, userId, 'pro', Date.now());
    const { client } = await connect(provider);
    const plans = (
      okResult(await call(client, 'search_plans', { zip: '77002', age: 40, per_page: 1 }), 'search_plans')._embedded as {
        plans: Array<{ id: string }>;
      }
    ).plans;
    const detail = okResult(await call(client, 'get_plan_details', { plan_id: plans[0]!.id }), 'get_plan_details');
    assert.equal(detail.id, plans[0]!.id);
  });

  test('the daily count continues across a refresh; access and refresh tokens rotate', async () => {
    const before = svc.services.quota.peek(userId, 'pro');
    assert.equal(before.limit, LIMITS.pro);
    assert.ok(before.remaining < LIMITS.pro - 1, `earlier calls were counted (remaining ${before.remaining})`);
    const old = provider.tokens()!;

    const metadata = await discoverAuthorizationServerMetadata(svc.authUrl);
    assert.ok(metadata !== undefined);
    const refreshed = await refreshAuthorization(svc.authUrl, {
      metadata,
      clientInformation: provider.clientInformation()!,
      refreshToken: old.refresh_token!,
      resource: new URL(svc.mcpUrl),
    });
    provider.saveTokens(refreshed);
    assert.notEqual(refreshed.access_token, old.access_token, 'a new access token');
    assert.equal(typeof refreshed.refresh_token, 'string');
    assert.notEqual(refreshed.refresh_token, old.refresh_token, 'the refresh token rotated');
    const payload = decodeJwtPart(refreshed.access_token, 1);
    assert.equal(payload.sub, userId);
    assert.equal(payload.aud, svc.mcpUrl);

    // A new client with the new access token: the same daily counter, one lower.
    const { client } = await connect(provider);
    assert.equal(provider.tokens()!.access_token, refreshed.access_token);
    okResult(await call(client, 'list_plan_years'), 'list_plan_years with the refreshed token');
    const afterRefresh = svc.services.quota.peek(userId, 'pro');
    assert.equal(afterRefresh.remaining, before.remaining - 1, 'the counter kept going, not reset by the new token');

    // The used refresh token is spent.
    const reuse = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: old.refresh_token!,
        client_id: provider.clientInformation()!.client_id,
      }).toString(),
    });
    assert.equal(reuse.status, 400);
    assert.equal(((await reuse.json()) as { error: string }).error, 'invalid_grant');

    // Replay detection: reusing a spent refresh token revokes the whole grant, so the newly issued refresh
    // token is gone too, and so is its access token at the MCP endpoint (the grant is checked per call).
    const replayed = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshed.refresh_token!,
        client_id: provider.clientInformation()!.client_id,
      }).toString(),
    });
    assert.equal(replayed.status, 400, 'the rotated refresh token died with its grant');
    assert.equal(((await replayed.json()) as { error: string }).error, 'invalid_grant');
    const revoked = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${refreshed.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    assert.equal(revoked.status, 401, 'the access token of a revoked grant is refused before it expires');
    assert.match(revoked.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('a log-in (not sign-up) of the same user in a fresh browser gives tokens for the same account and the same counter', async () => {
    const second = new InMemoryOAuthProvider(redirectUri);
    const client = new Client({ name: 'hpd-oauth-flow-test-2', version: '1.0.0' });
    clients.push(client);
    const transport = new StreamableHTTPClientTransport(new URL(svc.mcpUrl), { authProvider: second });
    await assert.rejects(client.connect(transport), UnauthorizedError);

    const { callback, pageHtml } = await completeInteraction(
      second.lastAuthorizationUrl(),
      redirectUri,
      { action: 'login', email: EMAIL, password: PASSWORD },
      new CookieJar(),
    );
    assert.match(pageHtml, /Log in/);
    assert.doesNotMatch(pageHtml, /Continue as/, 'a fresh browser is not signed in');
    const code = callback.searchParams.get('code');
    assert.ok(code !== null, `a code in ${callback.href}`);
    assert.equal(callback.searchParams.get('state'), second.states.at(-1));
    await transport.finishAuth(code);

    const payload = decodeJwtPart(second.tokens()!.access_token, 1);
    assert.equal(payload.sub, userId, 'the same account');
    assert.equal(svc.services.store.listUsers().filter((u) => u.email === EMAIL).length, 1, 'no second account');

    const before = svc.services.quota.peek(userId, 'pro').remaining;
    const { client: again } = await connect(second);
    okResult(await call(again, 'lookup_zip', { zip: '77002' }), 'lookup_zip');
    assert.equal(svc.services.quota.peek(userId, 'pro').remaining, before - 1);
  });
});
