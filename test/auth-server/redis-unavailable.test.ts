/**
 * The authorization server on a real Redis that stops answering (stopped) or takes no writes (a
 * primary turned into a replica, as in a failover behind one address): registration, token,
 * refresh and revocation requests get 503 with Retry-After and OAuth's `temporarily_unavailable`, never 500
 * `server_error`, and no stack trace per request; the same requests succeed once Redis is back. The
 * MCP verifier cannot tell whether a token was revoked then, and says so ('unavailable', a 503 there).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { UNAVAILABLE_RETRY_AFTER_S } from '../../src/auth-server/unavailable.ts';
import { createCredentialVerifier, type CredentialVerifier } from '../../src/mcp/credentials.ts';
import { connectRedis, type RedisLink } from '../../src/policy/redis-link.ts';
import { startTestRedis } from '../helpers/redis-server.ts';
import { authorizeUrl, fullFlow, MCP_RESOURCE, pkcePair, REDIRECT_URI, startFixture } from './oauth-test-client.ts';

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly type: string | null;
  readonly body: string;
}

async function post(url: string, type: string, body: string): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': type, accept: 'application/json' }, body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type'), body: await res.text() };
}

const register = (issuer: string): Promise<Answer> =>
  post(
    `${issuer}/reg`,
    'application/json',
    JSON.stringify({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  );

const refresh = (issuer: string, clientId: string, token: string): Promise<Answer> =>
  post(
    `${issuer}/token`,
    'application/x-www-form-urlencoded',
    new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId, resource: MCP_RESOURCE }).toString(),
  );

const revoke = (issuer: string, clientId: string, token: string): Promise<Answer> =>
  post(`${issuer}/token/revocation`, 'application/x-www-form-urlencoded', new URLSearchParams({ token, client_id: clientId }).toString());

function assertUnavailable(a: Answer, what: string): void {
  assert.equal(a.status, 503, `${what}: ${a.status} ${a.body}`);
  assert.equal(a.retryAfter, String(UNAVAILABLE_RETRY_AFTER_S), what);
  assert.match(a.type ?? '', /^application\/json/, what);
  assert.equal((JSON.parse(a.body) as { error: string }).error, 'temporarily_unavailable', what);
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function setUp(t: import('node:test').TestContext): Promise<{
  issuer: string;
  link: RedisLink;
  errors: unknown[];
  client: string;
  refreshToken: string;
  accessToken: string;
  verifier: CredentialVerifier;
  redis: Awaited<ReturnType<typeof startTestRedis>>;
}> {
  const redis = await startTestRedis();
  t.after(() => redis.close());
  const link = await connectRedis(redis.url, { log: () => {} });
  t.after(() => link.close());
  const errors: unknown[] = [];
  const f = await startFixture(t, { redis: link.client, onError: (err) => errors.push(err) });
  const flow = await fullFlow(f.server.url, { email: `u${Date.now()}@example.test`, password: 'correct horse battery', mode: 'signup' });
  assert.ok(flow.tokens.refresh_token, 'a refresh token to use during the outage');
  const verifier = createCredentialVerifier({
    issuer: f.server.url,
    resource: MCP_RESOURCE,
    store: f.store,
    grantActive: f.server.grantActive,
    accessTokenRevoked: f.server.accessTokenRevoked,
  });
  return {
    issuer: f.server.url,
    link,
    errors,
    client: flow.client.client_id,
    refreshToken: flow.tokens.refresh_token!,
    accessToken: flow.tokens.access_token!,
    verifier,
    redis,
  };
}

test('Redis stopped: registration and refresh answer 503 temporarily_unavailable with Retry-After, a browser sign-in a 503 page, and all work again once it is back', {
  timeout: 60_000,
}, async (t) => {
  const s = await setUp(t);
  await s.redis.stop();
  await until('the link sees Redis down', () => !s.link.up());
  assertUnavailable(await register(s.issuer), 'registration');
  assertUnavailable(await refresh(s.issuer, s.client, s.refreshToken), 'refresh');
  assertUnavailable(await revoke(s.issuer, s.client, s.accessToken), 'revocation');
  const verdict = await s.verifier.verify(`Bearer ${s.accessToken}`);
  assert.equal(verdict.ok ? 'ok' : verdict.reason, 'unavailable', 'the MCP endpoint cannot tell whether the token was revoked');
  // A browser starting a sign-in: a page saying so, not a redirect to the client with server_error.
  const page = await fetch(authorizeUrl(s.issuer, { clientId: s.client, challenge: pkcePair().challenge }), {
    headers: { accept: 'text/html' },
    redirect: 'manual',
  });
  const html = await page.text();
  assert.equal(page.status, 503, html);
  assert.equal(page.headers.get('retry-after'), String(UNAVAILABLE_RETRY_AFTER_S));
  assert.equal(page.headers.get('location'), null);
  assert.match(html, /temporarily_unavailable/);
  assert.deepEqual(s.errors, [], 'no server error reported per request (the link logs the outage once)');

  await s.redis.start();
  await until('the link sees Redis again', () => s.link.up());
  assert.equal((await register(s.issuer)).status, 201);
  assert.equal((await s.verifier.verify(`Bearer ${s.accessToken}`)).ok, true);
  assert.equal((await revoke(s.issuer, s.client, s.accessToken)).status, 200);
  assert.equal((await s.verifier.verify(`Bearer ${s.accessToken}`)).ok, false);
  const again = await refresh(s.issuer, s.client, s.refreshToken);
  assert.equal(again.status, 200, again.body);
});

test('Redis turned into a replica (READONLY): registration and refresh answer 503, and work again once it is a primary', {
  timeout: 60_000,
}, async (t) => {
  const s = await setUp(t);
  const other = await startTestRedis();
  t.after(() => other.close());
  const admin = new Redis(s.redis.url);
  t.after(() => admin.disconnect());
  await admin.call('REPLICAOF', '127.0.0.1', String(other.port));
  // The first write to meet READONLY fails like the rest: no request gets a 500 for it.
  assertUnavailable(await register(s.issuer), 'registration');
  assert.equal(s.link.up(), false, 'a READONLY reply counts the link as down');
  assertUnavailable(await refresh(s.issuer, s.client, s.refreshToken), 'refresh');
  // The client is found (reads still work); recording the revoked token is what fails: never a 200.
  assertUnavailable(await revoke(s.issuer, s.client, s.accessToken), 'revocation');
  assert.deepEqual(s.errors, [], 'no server error reported per request');

  await admin.call('REPLICAOF', 'NO', 'ONE');
  await until('the link is up once the server is a primary again', () => s.link.up());
  assert.equal((await register(s.issuer)).status, 201);
  assert.equal((await revoke(s.issuer, s.client, s.accessToken)).status, 200);
  const verdict = await s.verifier.verify(`Bearer ${s.accessToken}`);
  assert.equal(verdict.ok ? 'ok' : verdict.description, 'The access token was revoked');
});
