/**
 * Several instances behind a load balancer, tested as a real cluster on loopback: Debian's
 * HAProxy with deploy/haproxy.cfg, two `hpd serve` (one REST worker each) with their own copies of the
 * build, one real redis-server. Quotas stay exact across instances and restarts, a key revoked through
 * one instance's CLI and an access token revoked at one instance's /token/revocation are refused by
 * both within a second, a killed instance costs only its requests in flight, a Redis outage degrades as documented and is reconciled, OAuth and MCP sessions work through
 * the balancer, and both instances adopt the same new build under load.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import { hashKey } from '../../src/policy/api-keys.ts';
import { quotaKey } from '../../src/policy/redis-store.ts';
import { fullFlow, tokenRequest } from '../auth-server/oauth-test-client.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';

const YEARS = '/v1/health/years';
const SEARCH = '/v1/health/plans?zip=77002&age=40&year=2025';
const today = (): string => new Date().toISOString().slice(0, 10);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

async function get(url: string, key?: string): Promise<Outcome | Error> {
  try {
    const res = await fetch(url, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
    return { status: res.status, body: await res.text(), headers: res.headers };
  } catch (err) {
    return err as Error;
  }
}

/** Requests through `url` from `concurrency` loops until `stop()` resolves; every outcome, in order. */
/** `concurrency` loops of requests until `stop`; each waits `pauseMs` between requests (0: none). */
async function load(url: string, key: string, concurrency: number, stop: Promise<void>, pauseMs = 0): Promise<Array<Outcome | Error>> {
  const out: Array<Outcome | Error> = [];
  let running = true;
  void stop.then(() => (running = false));
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (running) {
        out.push(await get(url, key));
        if (pauseMs > 0) await sleep(pauseMs);
      }
    }),
  );
  return out;
}

const statuses = (outcomes: ReadonlyArray<Outcome | Error>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const k = o instanceof Error ? 'error' : String(o.status);
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return counts;
};

/** The status of an MCP initialize with `token` at `mcpUrl`. */
async function mcpStatus(mcpUrl: string, token: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

async function restAnswers(c: TestCluster): Promise<number[]> {
  const stats = await c.lb.stats();
  return ['hpd1', 'hpd2'].map((s) => stats.find((x) => x.backend === 'be_rest' && x.server === s)?.responses2xx ?? 0);
}

describe('a cluster: HAProxy, two instances, one Redis', { timeout: 600_000 }, () => {
  let c: TestCluster;
  before(async () => {
    c = await startCluster({ HPD_REDIS_GRACE_SECONDS: '60' });
  });
  after(() => c?.close());

  /** A new account signed up through the balancer's authorization server, with a token for its MCP endpoint. */
  const signUpThroughBalancer = (prefix: string): ReturnType<typeof fullFlow> =>
    fullFlow(c.lb.authUrl, {
      email: `${prefix}-${randomBytes(4).toString('hex')}@example.com`,
      password: 'correct horse battery staple',
      mode: 'signup',
      resource: c.lb.mcpUrl,
    });

  test('150 concurrent requests with one Free key through HAProxy: exactly 100 succeed, on both instances; the count survives restarting both', async () => {
    const key = c.createKey('free');
    const before = await restAnswers(c);
    const outcomes = await Promise.all(Array.from({ length: 150 }, () => get(`${c.lb.restUrl}${YEARS}`, key)));
    assert.deepEqual(statuses(outcomes), { 200: 100, 429: 50 });
    const served = (await restAnswers(c)).map((n, i) => n - before[i]!);
    assert.ok(
      served.every((n) => n > 0),
      `successes per instance: ${served}`,
    );

    await c.restart(0);
    await c.restart(1);
    await c.waitUp();
    const again = await get(`${c.lb.restUrl}${YEARS}`, key);
    assert.ok(!(again instanceof Error));
    assert.equal(again.status, 429, 'the count lives in Redis, not in the instances');
    assert.equal(Number(await redisGet(c, quotaKey(today()), await keyUser(c, key))), 100);
  });

  test('a key revoked through one instance’s CLI is refused by the other within 1 s', async () => {
    const key = c.createKey('pro');
    const other = c.instances[1];
    assert.equal(((await get(`${other.restUrl}${YEARS}`, key)) as Outcome).status, 200);
    const id = await keyId(c, key);
    const revoked = c.hpd(0, ['keys', 'revoke', id]);
    assert.equal(revoked.status, 0, revoked.stderr);
    const start = Date.now();
    for (;;) {
      const r = (await get(`${other.restUrl}${YEARS}`, key)) as Outcome;
      if (r.status === 401) break;
      assert.equal(r.status, 200);
      assert.ok(Date.now() - start < 1000, 'still accepted 1 s after the revocation');
      await sleep(5);
    }
    process.stderr.write(`# revocation reached the other instance after ${Date.now() - start} ms\n`);
  });

  test('kill -9 of one instance under load: HAProxy stops routing to it; only requests in flight fail; the survivor’s count stays exact', async (t) => {
    t.after(async () => {
      if (c.instances[1].serve === null) {
        await c.restart(1);
        await c.waitUp();
      }
    });
    const key = c.createKey('free');
    const CONNECTIONS = 6;
    let kill!: () => void;
    const killed = new Promise<void>((r) => (kill = r));
    const loadDone = (async () => {
      await killed;
      await sleep(2500);
    })();
    const running = load(`${c.lb.restUrl}${YEARS}`, key, CONNECTIONS, loadDone);
    await sleep(300);
    await c.kill(1);
    kill();
    const outcomes = await running;
    const counts = statuses(outcomes);
    process.stderr.write(`# kill -9 under load: ${JSON.stringify(counts)}\n`);
    const failed =
      (counts.error ?? 0) +
      Object.entries(counts)
        .filter(([s]) => s !== '200' && s !== '429' && s !== 'error')
        .reduce((n, [, v]) => n + v, 0);
    // At most one request per connection was in flight on the killed instance.
    assert.ok(failed <= CONNECTIONS, `failures: ${JSON.stringify(counts)}`);
    const down = Date.now() + 3000;
    for (;;) {
      const stats = await c.lb.stats();
      const status = stats.find((s) => s.backend === 'be_rest' && s.server === 'hpd2')!.status;
      if (status.startsWith('DOWN')) break;
      assert.ok(Date.now() < down, `hpd2 still ${status} 2.5 s + 3 s after the kill`);
      await sleep(50);
    }
    // Requests that succeeded never exceed the limit. A request in flight on the killed instance may have
    // taken its unit there and be lost, whether it failed or HAProxy replayed it on the survivor (GETs are
    // retried, and then answered 200): at most one per connection, no more.
    const ok = counts['200'] ?? 0;
    assert.ok(ok <= 100 && ok >= 100 - CONNECTIONS, `200s: ${ok}, failures ${failed}`);
    const after = await get(`${c.lb.restUrl}${YEARS}`, key);
    assert.equal((after as Outcome).status, 429);
  });

  test('Redis stopped under load: known keys keep working (readyz degraded), unknown keys 503 with Retry-After; counts reconciled when it is back', async (t) => {
    let redisDown = false;
    t.after(async () => {
      if (redisDown) await c.redis.start();
    });
    const key = c.createKey('pro');
    const user = await keyUser(c, key);
    let stopLoad!: () => void;
    // Paced (at most ~2,000 requests a second over ~3 s): unpaced, Node 22 sent 13,510 in 3.1 s and met
    // the Pro key's 10,000 a day, which is a 429 by design, not what this test is about.
    const running = load(`${c.lb.restUrl}${SEARCH}`, key, 4, new Promise<void>((r) => (stopLoad = r)), 2);
    await sleep(300);
    await c.redis.stop();
    redisDown = true;
    const readiness = async (): Promise<string[]> =>
      Promise.all(
        c.instances.map(async (inst) => {
          const ready = await get(`${inst.restUrl}/readyz`);
          return ready instanceof Error ? ready.message : `${ready.status} ${(JSON.parse(ready.body) as { status: string }).status}`;
        }),
      );
    await eventually('both instances say degraded', async () => (await readiness()).every((r) => r === '200 degraded'), 10_000);
    const unknown = (await get(`${c.lb.restUrl}${YEARS}`, `hpd_${randomBytes(20).toString('hex')}`)) as Outcome;
    assert.equal(unknown.status, 503);
    assert.equal(unknown.headers.get('retry-after'), '5');
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json');
    await sleep(500);
    await c.redis.start();
    redisDown = false;
    // The load goes on until both instances, each of their threads, are back.
    const back = (): boolean => c.instances.every((inst) => inst.serve!.stderr().split('reachable again').length - 1 >= 2);
    await eventually('both instances ready again', async () => back() && (await readiness()).every((r) => r === '200 ready'), 10_000);
    stopLoad();
    const outcomes = await running;
    const counts = statuses(outcomes);
    assert.deepEqual(Object.keys(counts), ['200'], `every request served: ${JSON.stringify(counts)}`);
    // Reconciled: Redis holds every success, plus at most what the four threads hold unused (0.5 % of 10,000).
    await eventually('Redis holds every success', async () => Number(await redisGet(c, quotaKey(today()), user)) >= counts['200']!, 5000);
    const counted = Number(await redisGet(c, quotaKey(today()), user));
    process.stderr.write(`# Redis outage under load: ${counts['200']} requests, all 200; Redis counts ${counted} after reconciling\n`);
    assert.ok(counted >= counts['200']! && counted <= counts['200']! + 50, `Redis counts ${counted} for ${counts['200']} successes`);
    // One line per change of state and thread, not one per request.
    for (const inst of c.instances) {
      const lines = inst.serve!.stderr().split('\n');
      assert.equal(lines.filter((l) => / unreachable \(/.test(l)).length, 2, inst.serve!.stderr());
      assert.equal(lines.filter((l) => l.includes('reachable again')).length, 2);
    }
  });

  test('OAuth through HAProxy: a token from one instance is accepted by the other, refreshed on either; an MCP session keeps working', async () => {
    const { client, tokens } = await signUpThroughBalancer('cluster');
    const access = tokens.access_token!;
    for (const inst of c.instances) {
      const res = await fetch(inst.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${access}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, `${inst.name} refused the token: ${text}`);
    }
    let refresh = tokens.refresh_token!;
    for (const inst of [c.instances[1], c.instances[0]]) {
      const r = await tokenRequest(inst.authUrl, { grant_type: 'refresh_token', refresh_token: refresh, client_id: client.client_id });
      assert.equal(r.status, 200, `${inst.name}: ${JSON.stringify(r.body)}`);
      refresh = r.body.refresh_token!;
    }

    const mcp = new Client({ name: 'cluster-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(c.lb.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${access}` } },
    });
    await mcp.connect(transport);
    try {
      for (let i = 0; i < 20; i++) {
        const r = (await mcp.callTool({ name: 'list_plan_years', arguments: {} })) as { isError?: boolean };
        assert.notEqual(r.isError, true);
      }
    } finally {
      await mcp.close();
    }
  });

  test('an access token revoked through one instance (RFC 7009) is refused by MCP on both instances within 1 s; its refresh token still works', async () => {
    const { client, tokens } = await signUpThroughBalancer('revoke');
    const access = tokens.access_token!;
    for (const inst of c.instances) assert.equal(await mcpStatus(inst.mcpUrl, access), 200, `${inst.name} accepts the token first`);
    const res = await fetch(`${c.instances[0].authUrl}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: access, token_type_hint: 'access_token', client_id: client.client_id }).toString(),
    });
    assert.equal(res.status, 200, await res.text());
    const start = Date.now();
    const refusedAfter = await Promise.all(
      c.instances.map(async (inst) => {
        for (;;) {
          const status = await mcpStatus(inst.mcpUrl, access);
          if (status === 401) return Date.now() - start;
          assert.equal(status, 200, inst.name);
          assert.ok(Date.now() - start < 1000, `${inst.name} still accepts the token 1 s after its revocation`);
          await sleep(5);
        }
      }),
    );
    process.stderr.write(`# access-token revocation refused by MCP after ${refusedAfter.join(' / ')} ms\n`);
    const refreshed = await tokenRequest(c.instances[1].authUrl, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    for (const inst of c.instances)
      assert.equal(await mcpStatus(inst.mcpUrl, refreshed.body.access_token!), 200, `${inst.name}: the new token works`);
  });

  test('a new build published on both hosts under load: both adopt the same hash, 0 errors', async () => {
    const key = c.createKey('enterprise');
    let stopLoad!: () => void;
    const running = load(`${c.lb.restUrl}${SEARCH}`, key, 4, new Promise<void>((r) => (stopLoad = r)));
    const hashes: string[] = [];
    for (const inst of c.instances) hashes.push(await buildFixtureVariant(`${c.dir}/variant-${inst.name}`, inst.buildsRoot, '2024-12-01'));
    assert.equal(hashes[0], hashes[1], 'the same inputs give the same build on every host');
    const deadline = Date.now() + 5000;
    for (;;) {
      const served = await Promise.all(
        c.instances.map(
          async (inst) =>
            (JSON.parse(((await get(`${inst.restUrl}/readyz`)) as Outcome).body) as { builds: Record<string, string> }).builds['2025'],
        ),
      );
      if (served.every((h) => h === hashes[0])) break;
      assert.ok(Date.now() < deadline, `not adopted: ${served}`);
      await sleep(50);
    }
    await sleep(300);
    stopLoad();
    const counts = statuses(await running);
    assert.deepEqual(Object.keys(counts), ['200'], JSON.stringify(counts));
  });
});

/** The stored record of a plaintext key, read from Redis by its hash (all Redis ever holds). */
async function keyRecord(c: TestCluster, plaintext: string): Promise<{ id: string; user_id: string }> {
  const id = await redisCall(c, (r) => r.hget('hpd:keys-by-hash', hashKey(plaintext)));
  if (id === null) throw new Error('key not in Redis');
  return JSON.parse((await redisCall(c, (r) => r.hget('hpd:keys', id)))!) as { id: string; user_id: string };
}
const keyId = async (c: TestCluster, plaintext: string): Promise<string> => (await keyRecord(c, plaintext)).id;
const keyUser = async (c: TestCluster, plaintext: string): Promise<string> => (await keyRecord(c, plaintext)).user_id;

async function redisCall<T>(c: TestCluster, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(c.redis.url);
  try {
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

const redisGet = (c: TestCluster, hash: string, field: string): Promise<string | null> => redisCall(c, (r) => r.hget(hash, field));
