/**
 * Two authorization servers sharing one Redis, as two `hpd serve` instances behind a load balancer:
 * both configured with the same issuer (the balancer's URL), each with its own Redis
 * connection as separate processes would have. A small HTTP balancer in this file sends each request
 * to the instance a test chooses, so a flow can start on one instance and continue on the other: what
 * one instance stored (clients, interactions, codes, refresh tokens, grants) and signed (tokens,
 * cookies) must be usable on the other, and concurrent first starts must agree on one JWKS. The
 * registration limits are totals over both, and the one-day expiry of unused clients holds whichever
 * instance registered or authorized them.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startAuthServer, type AuthServer, type AuthServerOptions } from '../../src/auth-server/index.ts';
import { DEFAULT_OAUTH_PREFIX } from '../../src/auth-server/redis-adapter.ts';
import { createRedisRegistrationLimit, DEFAULT_REGISTRATION_PREFIX } from '../../src/auth-server/redis-registration-limit.ts';
import { DEFAULT_SECRETS_KEY } from '../../src/auth-server/redis-secrets.ts';
import { ALL_REGISTRATIONS_PER_HOUR, REGISTRATIONS_PER_HOUR } from '../../src/auth-server/registration-limit.ts';
import { UNUSED_CLIENT_TTL_S } from '../../src/auth-server/unused-clients.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';
import {
  browse,
  cleanup,
  CookieJar,
  jwtPart,
  MCP_RESOURCE,
  openInteraction,
  pkcePair,
  REDIRECT_URI,
  registerClient,
  submitAndFollow,
  tokenRequest,
  type TokenResponse,
} from './oauth-test-client.ts';

const PASSWORD = 'correct horse battery';

let testRedis: TestRedis | undefined;
before(async () => {
  testRedis = await startTestRedis();
});
after(() => testRedis?.close());

type Route = 'A' | 'B' | 'alternate';

interface Balancer {
  readonly url: string;
  /** Where the next requests go; 'alternate' switches instance on every request. */
  route: Route;
  /** Requests forwarded to each instance. */
  readonly hits: { A: number; B: number };
  setBackends(a: number, b: number): void;
  close(): Promise<void>;
}

/** A load balancer stand-in: forwards each request unchanged (Host included) to A or B. */
async function startBalancer(): Promise<Balancer> {
  const ports = { A: 0, B: 0 };
  let next: 'A' | 'B' = 'A';
  const balancer: Balancer = {
    url: '',
    route: 'alternate',
    hits: { A: 0, B: 0 },
    setBackends(a, b) {
      ports.A = a;
      ports.B = b;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    let target: 'A' | 'B';
    if (balancer.route === 'alternate') {
      target = next;
      next = next === 'A' ? 'B' : 'A';
    } else {
      target = balancer.route;
    }
    balancer.hits[target] += 1;
    const upstream = request(
      { host: '127.0.0.1', port: ports[target], method: req.method, path: req.url, headers: req.headers, agent: false },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(balancer, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

interface Cluster {
  balancer: Balancer;
  a: AuthServer;
  b: AuthServer;
  /** Each instance's own address, bypassing the balancer. */
  direct: { A: string; B: string };
  redisA: Redis;
  redisB: Redis;
  store: StateStore;
  /** Each instance's state directory, as separate hosts have (should stay unused with Redis). */
  stateDirs: { A: string; B: string };
}

/**
 * An empty Redis, one user store, a balancer and two servers started concurrently (as two instances
 * would boot together) with the balancer's URL as their issuer.
 */
async function startCluster(t: TestContext, overrides: Partial<AuthServerOptions> = {}): Promise<Cluster> {
  if (testRedis === undefined) throw new Error('redis-server not started');
  const defer = cleanup(t);
  const connect = (): Redis => {
    const redis = new Redis(testRedis!.url);
    defer(() => redis.quit());
    return redis;
  };
  const redisA = connect();
  const redisB = connect();
  await redisA.flushdb();
  const dir = mkdtempSync(join(tmpdir(), 'hpd-auth-cluster-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  // The user registry is shared too in a real cluster (the Redis state store); here both use one object.
  const store = openLmdbStateStore(join(dir, 'state'));
  defer(() => store.close());
  const balancer = await startBalancer();
  defer(() => balancer.close());
  const stateDirs = { A: join(dir, 'auth-state-a'), B: join(dir, 'auth-state-b') };
  const start = async (redis: Redis, stateDir: string): Promise<AuthServer> => {
    const server = await startAuthServer({
      port: 0,
      issuer: balancer.url,
      mcpResource: MCP_RESOURCE,
      store,
      stateDir,
      redis,
      onError: (err) => t.diagnostic(`auth server error: ${String(err)}`),
      ...overrides,
    });
    defer(() => server.close());
    return server;
  };
  const [a, b] = await Promise.all([start(redisA, stateDirs.A), start(redisB, stateDirs.B)]);
  balancer.setBackends(a.port, b.port);
  return { balancer, a, b, direct: { A: `http://127.0.0.1:${a.port}`, B: `http://127.0.0.1:${b.port}` }, redisA, redisB, store, stateDirs };
}

async function jwksOf(base: string): Promise<{ keys: Array<Record<string, unknown>> }> {
  const res = await fetch(`${base}/jwks`);
  assert.equal(res.status, 200);
  return (await res.json()) as { keys: Array<Record<string, unknown>> };
}

/**
 * Browser part of an authorization through the balancer (with its current route), returning the code
 * and PKCE verifier for the exchange.
 */
async function authorizeThroughBalancer(
  c: Cluster,
  clientId: string,
  email: string,
  mode: 'signup' | 'login',
): Promise<{ code: string; verifier: string }> {
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, c.balancer.url, { clientId, challenge });
  const form: Record<string, string> = mode === 'signup' ? { email, password: PASSWORD, confirm: PASSWORD } : { email, password: PASSWORD };
  const callback = await submitAndFollow(jar, c.balancer.url, url, mode, form);
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${callback.href}`);
  return { code, verifier };
}

async function exchange(base: string, clientId: string, code: string, verifier: string): Promise<TokenResponse> {
  const { status, body } = await tokenRequest(base, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: clientId,
    resource: MCP_RESOURCE,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

test('two instances, one Redis, one issuer: a client registered on A is known to B; a flow alternating instances completes', async (t) => {
  const c = await startCluster(t);
  const client = await registerClient(c.direct.A);

  // Every request of the browser part lands on the other instance than the one before: the
  // interaction, the session and the signed cookies made by one are honoured by the other.
  c.balancer.route = 'alternate';
  const { code, verifier } = await authorizeThroughBalancer(c, client.client_id, 'ann@example.org', 'signup');
  assert.ok(c.balancer.hits.A >= 2 && c.balancer.hits.B >= 2, JSON.stringify(c.balancer.hits));

  // The code was minted by whichever instance finished the interaction; redeem it at B.
  const tokens = await exchange(c.direct.B, client.client_id, code, verifier);
  assert.equal(jwtPart(tokens.access_token ?? '', 1).client_id, client.client_id);
  assert.equal(jwtPart(tokens.access_token ?? '', 1).iss, c.balancer.url);

  // Nothing went to the state directory.
  assert.equal(existsSync(c.stateDirs.A) || existsSync(c.stateDirs.B), false, 'no auth-keys.json or oauth.mdb with Redis');
});

test("two instances, one Redis: A's access token verifies against B's JWKS (same kid); A's refresh token is redeemed at B, rotation and reuse detection are shared", async (t) => {
  const c = await startCluster(t);
  const client = await registerClient(c.direct.A);
  c.balancer.route = 'A';
  const auth = await authorizeThroughBalancer(c, client.client_id, 'bo@example.org', 'signup');
  assert.equal(c.balancer.hits.B, 0, 'the whole flow on A');
  const fromA = await exchange(c.direct.A, client.client_id, auth.code, auth.verifier);

  const [jwksA, jwksB] = await Promise.all([jwksOf(c.direct.A), jwksOf(c.direct.B)]);
  assert.deepEqual(jwksB, jwksA);
  assert.equal(jwksB.keys.length, 1);
  assert.equal(jwtPart(fromA.access_token ?? '', 0).kid, jwksB.keys[0].kid);
  const verifyAt = (base: string, token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${base}/jwks`)), {
      issuer: c.balancer.url,
      audience: MCP_RESOURCE,
      typ: 'at+jwt',
      algorithms: ['RS256'],
      requiredClaims: ['exp', 'sub', 'client_id'],
    });
  await verifyAt(c.direct.B, fromA.access_token ?? '');

  const refreshedAtB = await tokenRequest(c.direct.B, {
    grant_type: 'refresh_token',
    refresh_token: fromA.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(refreshedAtB.status, 200, JSON.stringify(refreshedAtB.body));
  const second = refreshedAtB.body.refresh_token ?? '';
  assert.ok(second !== '' && second !== fromA.refresh_token, 'rotated');
  await verifyAt(c.direct.A, refreshedAtB.body.access_token ?? '');

  // A sees that B consumed the first refresh token: its reuse fails there and revokes the grant…
  const reuseAtA = await tokenRequest(c.direct.A, {
    grant_type: 'refresh_token',
    refresh_token: fromA.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(reuseAtA.status, 400);
  assert.equal(reuseAtA.body.error, 'invalid_grant');
  // …and B sees the revocation A made.
  const afterAtB = await tokenRequest(c.direct.B, { grant_type: 'refresh_token', refresh_token: second, client_id: client.client_id });
  assert.equal(afterAtB.body.error, 'invalid_grant');

  // Closing the servers leaves the connections they were given open.
  await c.a.close();
  await c.b.close();
  assert.equal(await c.redisA.ping(), 'PONG');
  assert.equal(await c.redisB.ping(), 'PONG');
});

test('two instances started at once on an empty Redis end up with one JWKS, stored once', async (t) => {
  const c = await startCluster(t);
  const [jwksA, jwksB] = await Promise.all([jwksOf(c.direct.A), jwksOf(c.direct.B)]);
  assert.equal(jwksA.keys.length, 1);
  assert.deepEqual(jwksB, jwksA);
  const stored = JSON.parse((await c.redisA.get(DEFAULT_SECRETS_KEY)) ?? 'null') as { signing_keys: Array<{ kid: string }> } | null;
  assert.deepEqual(
    stored?.signing_keys.map((k) => k.kid),
    [jwksA.keys[0].kid],
  );
});

test('two instances, one Redis: refresh tokens expire after 30 days on the injected clock, whichever instance is asked', async (t) => {
  let now = Date.now();
  const c = await startCluster(t, { clock: () => now });
  const client = await registerClient(c.direct.B);
  c.balancer.route = 'B';
  const auth = await authorizeThroughBalancer(c, client.client_id, 'cy@example.org', 'signup');
  const tokens = await exchange(c.direct.B, client.client_id, auth.code, auth.verifier);
  now += 29 * 86_400_000;
  const ok = await tokenRequest(c.direct.A, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  now += 31 * 86_400_000;
  const late = await tokenRequest(c.direct.B, {
    grant_type: 'refresh_token',
    refresh_token: ok.body.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(late.status, 400);
  assert.equal(late.body.error, 'invalid_grant');
});

test('two instances, one Redis: the log-in throttle is shared — 5 wrong passwords on A, the 6th on B is refused', async (t) => {
  let now = Date.now();
  const c = await startCluster(t, { clock: () => now });
  const client = await registerClient(c.direct.A);
  c.balancer.route = 'A';
  await authorizeThroughBalancer(c, client.client_id, 'dee@example.org', 'signup');

  const jar = new CookieJar();
  const { url } = await openInteraction(jar, c.balancer.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  const wrong = { email: 'dee@example.org', password: 'not it' };
  for (let i = 0; i < 5; i += 1) {
    const res = await browse(jar, `${url}/login`, { form: wrong });
    assert.equal(res.status, 200, `attempt ${i + 1}`);
    await res.arrayBuffer();
  }
  c.balancer.route = 'B';
  const hitsBefore = c.balancer.hits.B;
  const throttled = await browse(jar, `${url}/login`, { form: wrong });
  assert.equal(c.balancer.hits.B, hitsBefore + 1, 'answered by B');
  assert.equal(throttled.status, 429);
  assert.equal(throttled.headers.get('retry-after'), '1');
  await throttled.arrayBuffer();
  now += 1000;
  const callback = await submitAndFollow(jar, c.balancer.url, url, 'login', { email: 'dee@example.org', password: PASSWORD });
  assert.ok(callback.searchParams.get('code') !== null, 'after the back-off the right password works on B');
});

test('two instances, one Redis: the sign-up allowance is a total — 3 an hour through both, the 4th refused on either with the wait, no 4th account', async (t) => {
  const c = await startCluster(t, { signupsPerHour: 3 });
  const client = await registerClient(c.direct.A);
  c.balancer.route = 'alternate';
  for (const email of ['s1@example.org', 's2@example.org', 's3@example.org']) {
    const jar = new CookieJar();
    const { url } = await openInteraction(jar, c.balancer.url, { clientId: client.client_id, challenge: pkcePair().challenge });
    const callback = await submitAndFollow(jar, c.balancer.url, url, 'signup', { email, password: PASSWORD, confirm: PASSWORD });
    assert.ok(callback.searchParams.get('code') !== null, email);
  }
  for (const route of ['A', 'B'] as const) {
    const jar = new CookieJar();
    c.balancer.route = route;
    const { url } = await openInteraction(jar, c.balancer.url, { clientId: client.client_id, challenge: pkcePair().challenge });
    const refused = await browse(jar, `${url}/signup`, {
      form: { email: `late-${route}@example.org`, password: PASSWORD, confirm: PASSWORD },
    });
    assert.equal(refused.status, 429, `through ${route}`);
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'says how long to wait');
    assert.match(await refused.text(), /not taking new accounts right now; try again in \d+ seconds?\./);
  }
  assert.deepEqual(
    c.store
      .listUsers()
      .map((u) => u.email)
      .sort(),
    ['s1@example.org', 's2@example.org', 's3@example.org'],
  );
});

test('two instances, one Redis: the registration limits are totals — one address gets REGISTRATIONS_PER_HOUR across both, every address together ALL_REGISTRATIONS_PER_HOUR', async (t) => {
  let now = Date.now();
  const c = await startCluster(t, { clock: () => now });
  c.balancer.route = 'alternate';
  const statuses: number[] = [];
  for (let i = 0; i < REGISTRATIONS_PER_HOUR + 4; i++) statuses.push((await rawRegister(c.balancer.url)).status);
  assert.deepEqual(statuses, [...Array(REGISTRATIONS_PER_HOUR).fill(201), ...Array(4).fill(429)]);
  assert.ok(
    c.balancer.hits.A >= REGISTRATIONS_PER_HOUR / 2 && c.balancer.hits.B >= REGISTRATIONS_PER_HOUR / 2,
    JSON.stringify(c.balancer.hits),
  );

  // The server-wide bucket, through the same script each instance runs (addresses as the PROXY header would name them).
  now += 3_600_000;
  const limits = [c.redisA, c.redisB].map((redis) => createRedisRegistrationLimit(redis, { clock: () => now }));
  const addresses = Math.ceil(ALL_REGISTRATIONS_PER_HOUR / REGISTRATIONS_PER_HOUR) + 5;
  const outcomes = await Promise.all(
    Array.from({ length: addresses * REGISTRATIONS_PER_HOUR }, (_, i) => limits[i % 2]!.take(`2001:db8::${i % addresses}`)),
  );
  assert.equal(outcomes.filter((r) => r === null).length, ALL_REGISTRATIONS_PER_HOUR, 'allowed, both instances together');
  assert.equal(outcomes.filter((r) => r?.scope === 'server').length, addresses * REGISTRATIONS_PER_HOUR - ALL_REGISTRATIONS_PER_HOUR);
  const keys = await c.redisA.keys(`${DEFAULT_REGISTRATION_PREFIX}address:*`);
  assert.ok(keys.length <= addresses + 1, `address buckets stored: ${keys.length}`);
  const refused = await limits[0]!.take('2001:db8::ffff');
  assert.deepEqual(refused, { scope: 'server', wait: Math.ceil(3600 / ALL_REGISTRATIONS_PER_HOUR) });
  assert.equal((await c.redisA.keys(`${DEFAULT_REGISTRATION_PREFIX}address:2001:db8::ffff`)).length, 0, 'a refused address leaves no key');
  now += 3_600_000 / ALL_REGISTRATIONS_PER_HOUR;
  assert.equal(await limits[1]!.take('2001:db8::ffff'), null, 'refilled evenly over the hour, on the other instance too');
  assert.ok((await c.redisA.pttl(`${DEFAULT_REGISTRATION_PREFIX}all`)) > 0, 'the buckets expire');
});

test('two instances, one Redis: a client registered on A and never used expires after a day; one authorized on B stays', async (t) => {
  const c = await startCluster(t);
  const unused = await registerClient(c.direct.A);
  const used = await registerClient(c.direct.A);
  const ttl = (id: string): Promise<number> => c.redisA.pttl(`${DEFAULT_OAUTH_PREFIX}rec:Client:${id}`);
  const day = UNUSED_CLIENT_TTL_S * 1000;
  for (const id of [unused.client_id, used.client_id]) {
    const left = await ttl(id);
    assert.ok(left > day - 60_000 && left <= day + 60_000, `a new client lives a day: ${left} ms`);
  }
  c.balancer.route = 'B';
  await authorizeThroughBalancer(c, used.client_id, 'fay@example.org', 'signup');
  assert.equal(await ttl(used.client_id), -1, 'a client with a grant made on B has no expiry');
  assert.ok((await ttl(unused.client_id)) > 0, 'the unused one still expires');
});

async function rawRegister(url: string): Promise<{ status: number }> {
  const res = await fetch(`${url}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', client_name: 'flood' }),
  });
  await res.arrayBuffer();
  return { status: res.status };
}
