/**
 * A Redis Sentinel failover under load, as operators run it: Debian's HAProxy with deploy/haproxy.cfg
 * in front of two `hpd serve` (one REST worker each) on a redis+sentinel:// URL, a primary, a replica
 * and three Debian redis-sentinel processes. The primary is killed (SIGKILL) while a client that never
 * retries sends ~1–2k requests a second with one Enterprise key whose daily limit (100,000) is reached
 * during the test. Every instance follows the promoted replica without a restart; nothing answers 500;
 * what needs Redis answers 503 with Retry-After only until the election (plus the reconnect); a key
 * is created through the CLI and an OAuth token issued within 15 s of the kill; the key's successes
 * stay within the limit + 1 % + what asynchronous replication lost, which is measured (the killed
 * primary's append-only file against the replica's last state before its promotion).
 *
 * And a failover behind one address, as a managed Redis does it: the server the instances reach is
 * turned into a replica (READONLY to every write) and back; known keys are served throughout, what
 * needs Redis answers 503, and the instances come back by themselves with their local counts added.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { quotaKey } from '../../src/policy/redis-store.ts';
import { fullFlow, REDIRECT_URI, type Registered } from '../auth-server/oauth-test-client.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { startTestRedis } from '../helpers/redis-server.ts';
import { HPD } from '../helpers/serve-fixture.ts';

const LIMIT = 100_000;
/** Left of the key's day when the load starts. */
const LEFT = 20_000;
/**
 * Left when the primary is killed (others' use is added just before): less than the requests of the
 * outage, so threads that each spent all of it offline would overrun the limit by more than 1 %.
 */
const LEFT_AT_KILL = 1_500;
/** Sets the day's count so that ARGV[2] remain of the limit ARGV[1]; returns what it added. */
const USE_ALL_BUT = `
local added = tonumber(ARGV[1]) - tonumber(ARGV[2]) - tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0')
redis.call('HINCRBY', KEYS[1], ARGV[3], added)
return added
`;
const YEARS = '/v1/health/years';
const SEARCH = '/v1/health/plans?zip=77002&age=40&year=2025';
/** What the instances need after the election: ioredis's reconnect back-off (≤ 1 s) and a reload. */
const RECONNECT_MARGIN_MS = 3_000;
const WITHIN_MS = 15_000;
const today = (): string => new Date().toISOString().slice(0, 10);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Answer {
  /** When the answer arrived (ms since the epoch). */
  readonly at: number;
  /** HTTP status, or 0 for a failed request (connection refused or reset). */
  readonly status: number;
  readonly retryAfter: string | null;
  readonly what: string;
}

async function ask(what: string, url: string, init: RequestInit = {}): Promise<Answer> {
  try {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return { at: Date.now(), status: res.status, retryAfter: res.headers.get('retry-after'), what };
  } catch {
    return { at: Date.now(), status: 0, retryAfter: null, what };
  }
}

/** `hpd ARGS` with instance 0's environment, without blocking the event loop (the load keeps going). */
function hpdAsync(c: TestCluster, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HPD, ...args], { env: c.instances[0].env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The value of a hash field in the dataset a killed server left in its append-only file. */
async function readKilledServer(dir: string, hash: string, field: string): Promise<number> {
  const copy = mkdtempSync(join(tmpdir(), 'hpd-killed-'));
  try {
    cpSync(dir, copy, { recursive: true });
    // Its own directory for the AOF it loads; the later --dir wins over the helper's.
    const server = await startTestRedis({ args: ['--dir', copy] });
    try {
      const r = new Redis(server.url);
      try {
        return Number((await r.hget(hash, field)) ?? 0);
      } finally {
        r.disconnect();
      }
    } finally {
      await server.close();
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

test('Sentinel failover under load: no 500, 503 only until the election, CLI and OAuth back within 15 s, quota within limit + 1 % + replication loss', {
  timeout: 240_000,
}, async (t) => {
  const c = await startCluster({ HPD_REDIS_GRACE_SECONDS: '60' }, { sentinel: true });
  t.after(() => c.close());
  const s = c.sentinel!;

  // The CLI on the sentinel URL: create and list.
  const label = `failover-${randomBytes(4).toString('hex')}`;
  const made = c.hpd(0, ['keys', 'create', '--tier', 'enterprise', '--label', label]);
  assert.equal(made.status, 0, made.stderr);
  const key = made.stdout.trim();
  const listed = c.hpd(1, ['keys', 'list']);
  assert.equal(listed.status, 0, listed.stderr);
  const row = listed.stdout.split('\n').find((l) => l.split('\t')[2] === label);
  assert.ok(row !== undefined, `hpd keys list shows the new key: ${listed.stdout}`);
  const user = row.split('\t')[1]!;

  // Refresh tokens to spend one per attempt during the failover (a failed refresh may consume one).
  const email = `failover-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  const first = await fullFlow(c.lb.authUrl, { email, password, mode: 'signup', resource: c.lb.mcpUrl });
  const client: Registered = first.client;
  const accessToken = first.tokens.access_token!;
  const refreshTokens = [first.tokens.refresh_token!];
  while (refreshTokens.length < 24)
    refreshTokens.push(
      (await fullFlow(c.lb.authUrl, { email, password, mode: 'login', client, resource: c.lb.mcpUrl })).tokens.refresh_token!,
    );

  const primaryPort = await s.primaryPort();
  assert.equal(primaryPort, c.redis.port);
  const admin = new Redis(c.redis.url);
  admin.on('error', () => {});
  t.after(() => admin.disconnect());
  await admin.hset(quotaKey(today()), user, LIMIT - LEFT);
  await s.waitReplicated();
  const pids = c.instances.map((i) => i.serve!.child.pid);

  // The replica's count of the key's day, as long as it is a replica: what it will start from.
  let replicaCount = -1;
  let watching = true;
  const replica = new Redis({ port: s.servers[1].port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
  // The cleanup may stop the servers before these connections: their resets are expected.
  replica.on('error', () => {});
  const watcher = (async () => {
    while (watching) {
      const replies = await replica.pipeline().call('ROLE').hget(quotaKey(today()), user).exec();
      const role = (replies?.[0]?.[1] as string[] | undefined)?.[0];
      if (role !== 'slave') break;
      replicaCount = Number(replies?.[1]?.[1] ?? 0);
      await sleep(5);
    }
  })();
  t.after(() => {
    watching = false;
    replica.disconnect();
  });

  // The load: 8 loops through HAProxy with one key, no retries.
  const load: Answer[] = [];
  let loading = true;
  const headers = { authorization: `Bearer ${key}` };
  const loops = Array.from({ length: 8 }, async () => {
    while (loading) {
      load.push(await ask('load', `${c.lb.restUrl}${SEARCH}`, { headers }));
      await sleep(2);
    }
  });
  await sleep(1500);
  // Another client's use, seen by every thread at its next lease (each leases every ~60 requests).
  const othersUse = Number(await admin.eval(USE_ALL_BUT, 1, quotaKey(today()), LIMIT, LEFT_AT_KILL, user));
  await sleep(200);
  await s.waitReplicated();
  admin.disconnect();

  const killedAt = Date.now();
  await s.servers[0].kill();
  // What needs Redis, from the kill on: an unknown key (every 100 ms), a registration (every 200 ms),
  // a refresh (every 500 ms, until one succeeds), a key created through the CLI (until one succeeds).
  const probes: Answer[] = [];
  let probing = true;
  const unknownKey = `hpd_${randomBytes(20).toString('hex')}`;
  const every = async (ms: number, run: () => Promise<boolean>): Promise<void> => {
    while (probing) {
      if (await run()) return;
      await sleep(ms);
    }
  };
  let tokenAt: number | null = null;
  let keyAt: number | null = null;
  let cliFailures = 0;
  const probeLoops = [
    every(100, async () => {
      probes.push(await ask('unknown key', `${c.lb.restUrl}${YEARS}`, { headers: { authorization: `Bearer ${unknownKey}` } }));
      return false;
    }),
    every(200, async () => {
      const body = JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
      probes.push(
        await ask('registration', `${c.lb.authUrl}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
      );
      return false;
    }),
    every(200, async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'failover', version: '1' } },
      });
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${accessToken}`,
      };
      probes.push(await ask('MCP with an access token', c.lb.mcpUrl, { method: 'POST', headers, body }));
      return false;
    }),
    every(500, async () => {
      const token = refreshTokens.shift();
      if (token === undefined) return true;
      const body = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: client.client_id,
        resource: c.lb.mcpUrl,
      });
      const a = await ask('token', `${c.lb.authUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: body.toString(),
      });
      probes.push(a);
      if (a.status === 200) tokenAt = a.at;
      return a.status === 200;
    }),
    every(100, async () => {
      const r = await hpdAsync(c, ['keys', 'create', '--tier', 'free', '--label', 'during failover']);
      if (r.code === 0) keyAt = Date.now();
      else {
        cliFailures += 1;
        assert.equal(r.stderr.trim().split('\n').length, 1, `one line from the CLI: ${r.stderr}`);
      }
      return r.code === 0;
    }),
  ];
  const newPort = await s.waitForNewPrimary(primaryPort, 30_000);
  const electedAt = Date.now();
  const deadline = killedAt + 20_000;
  while ((tokenAt === null || keyAt === null || Date.now() < killedAt + 12_000) && Date.now() < deadline) await sleep(100);
  await sleep(2000);
  probing = false;
  loading = false;
  await Promise.all([...loops, ...probeLoops]);
  watching = false;
  await watcher;

  // What the old primary had acknowledged against what the promoted replica started from.
  const acknowledged = await readKilledServer(s.servers[0].dir, quotaKey(today()), user);
  const replicationLoss = Math.max(0, acknowledged - replicaCount);
  const fresh = new Redis({ port: newPort, host: '127.0.0.1' });
  await sleep(1000); // the last offline counts are added
  const counted = Number(await fresh.hget(quotaKey(today()), user));
  fresh.disconnect();

  const count = (list: readonly Answer[], status: number): number => list.filter((a) => a.status === status).length;
  const ok = count(load, 200);
  const allowed = LEFT - othersUse;
  const overrun = ok - allowed;
  const all = [...load, ...probes];
  const unavailable = all.filter((a) => a.status === 503);
  const seconds = (ms: number): string => (ms / 1000).toFixed(2);
  const loadSeconds = (load.at(-1)!.at - load[0]!.at) / 1000;
  t.diagnostic(`failover (kill → sentinels name ${newPort}): ${seconds(electedAt - killedAt)} s`);
  t.diagnostic(
    `load: ${load.length} requests in ${loadSeconds.toFixed(1)} s (${Math.round(load.length / loadSeconds)}/s): ${ok} × 200, ${count(load, 429)} × 429`,
  );
  t.diagnostic(
    `503: ${unavailable.length} (last ${seconds(Math.max(0, ...unavailable.map((a) => a.at)) - killedAt)} s after the kill); 500: ${count(all, 500)}; failed requests: ${count(all, 0)}`,
  );
  t.diagnostic(
    `first key created through the CLI ${seconds((keyAt ?? Number.NaN) - killedAt)} s after the kill (${cliFailures} attempts refused before)`,
  );
  const mcp = probes.filter((a) => a.what === 'MCP with an access token');
  t.diagnostic(`MCP with an access token: ${mcp.length} requests, ${count(mcp, 200)} × 200, ${count(mcp, 503)} × 503`);
  t.diagnostic(`first token issued ${seconds((tokenAt ?? Number.NaN) - killedAt)} s after the kill`);
  t.diagnostic(
    `quota: ${ok} successes for ${allowed} left: overrun ${overrun}; replication loss ${replicationLoss} (old primary acknowledged ${acknowledged}, replica had ${replicaCount}); new primary counts ${counted}`,
  );

  if (process.env.HPD_TEST_DEBUG === '1') {
    for (const a of unavailable) t.diagnostic(`503 ${a.what} at ${a.at - killedAt} ms`);
    for (const inst of c.instances) t.diagnostic(inst.serve!.stderr());
  }
  assert.equal(count(all, 500), 0, 'no 500');
  assert.equal(count(all, 0), 0, 'no failed request');
  for (const a of unavailable) {
    assert.ok(a.at >= killedAt && a.at <= electedAt + RECONNECT_MARGIN_MS, `a 503 (${a.what}) ${a.at - killedAt} ms after the kill`);
    assert.ok(a.retryAfter !== null && Number(a.retryAfter) > 0, `503 with Retry-After (${a.what})`);
  }
  assert.ok(
    unavailable.some((a) => a.what === 'unknown key'),
    'an unknown key meets the outage',
  );
  assert.deepEqual(
    mcp.filter((a) => a.status !== 200 && a.status !== 503).map((a) => a.status),
    [],
    'a valid access token is never refused (401) because its grant could not be looked up',
  );
  assert.ok(
    mcp.some((a) => a.status === 200),
    'MCP sessions start again after the failover',
  );
  assert.ok(keyAt !== null && keyAt - killedAt <= WITHIN_MS, 'a key is created through the CLI within 15 s');
  assert.ok(tokenAt !== null && tokenAt - killedAt <= WITHIN_MS, 'a token is issued within 15 s');
  assert.ok(count(load, 429) > 0, 'the limit was reached during the test');
  assert.ok(overrun <= LIMIT * 0.01 + replicationLoss, `overrun ${overrun} > 1 % + ${replicationLoss}`);
  assert.ok(counted >= LIMIT - allowed + ok - replicationLoss, `every success counted on the new primary: ${counted}`);
  // Never restarted: the same processes, still running, each logged the outage and the way back.
  c.instances.forEach((inst, i) => {
    assert.equal(inst.serve!.child.pid, pids[i]);
    assert.equal(inst.serve!.child.exitCode, null);
    // One line per thread (main, REST worker) when Redis is lost and one when it is back: no flapping.
    const lines = inst.serve!.stderr().split('\n');
    assert.equal(lines.filter((l) => / unreachable \(/.test(l)).length, 2, inst.serve!.stderr());
    assert.equal(lines.filter((l) => l.includes('reachable again')).length, 2, inst.serve!.stderr());
  });
});

test('a failover behind one address (READONLY): known keys served throughout, what needs Redis 503, and back by itself with the counts added', {
  timeout: 180_000,
}, async (t) => {
  const c = await startCluster({ HPD_REDIS_GRACE_SECONDS: '60' });
  t.after(() => c.close());
  const other = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(c.redis.port)] });
  t.after(() => other.close());
  const a = new Redis(c.redis.url);
  const b = new Redis(other.url);
  // The cleanup may stop the servers before these connections: their resets are expected.
  a.on('error', () => {});
  b.on('error', () => {});
  t.after(() => {
    a.disconnect();
    b.disconnect();
  });
  const key = c.createKey('enterprise');
  const user = c
    .hpd(0, ['keys', 'list'])
    .stdout.split('\n')
    .find((l) => l.includes('cluster enterprise'))!
    .split('\t')[1]!;

  const load: Answer[] = [];
  let loading = true;
  const loops = Array.from({ length: 4 }, async () => {
    while (loading) {
      load.push(await ask('load', `${c.lb.restUrl}${SEARCH}`, { headers: { authorization: `Bearer ${key}` } }));
      await sleep(2);
    }
  });
  await sleep(1000);
  assert.equal(Number(await a.call('WAIT', '1', '5000')), 1, 'the replica is in sync');
  // The provider's failover: the replica promoted, the old primary following it at the same address.
  await b.call('REPLICAOF', 'NO', 'ONE');
  await a.call('REPLICAOF', '127.0.0.1', String(other.port));
  const demotedAt = Date.now();
  await sleep(1500);
  const during = [
    await ask('unknown key', `${c.lb.restUrl}${YEARS}`, { headers: { authorization: `Bearer hpd_${randomBytes(20).toString('hex')}` } }),
    await ask('registration', `${c.lb.authUrl}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    }),
  ];
  const readiness = await Promise.all(
    c.instances.map(async (inst) => (await (await fetch(`${inst.restUrl}/readyz`)).json()) as { status: string }),
  );
  await a.call('REPLICAOF', 'NO', 'ONE');
  const promotedAt = Date.now();
  let backAt: number | null = null;
  while (backAt === null && Date.now() < promotedAt + 10_000) {
    const r = await ask('unknown key', `${c.lb.restUrl}${YEARS}`, {
      headers: { authorization: `Bearer hpd_${randomBytes(20).toString('hex')}` },
    });
    if (r.status === 401) backAt = r.at;
    else await sleep(50);
  }
  await sleep(1500);
  loading = false;
  await Promise.all(loops);
  await sleep(1200); // the heartbeats add what was counted locally
  const counted = Number(await a.hget(quotaKey(today()), user));
  const ok = load.filter((x) => x.status === 200).length;
  t.diagnostic(
    `READONLY for ${((promotedAt - demotedAt) / 1000).toFixed(1)} s: ${load.length} requests with a known key, ${ok} × 200; back ${backAt === null ? 'never' : `${backAt - promotedAt} ms`} after the promotion; Redis counts ${counted}`,
  );

  assert.equal(
    ok,
    load.length,
    `every request with a known key served: ${JSON.stringify(load.filter((x) => x.status !== 200).slice(0, 3))}`,
  );
  for (const d of during) {
    assert.equal(d.status, 503, `${d.what} while Redis is read-only`);
    assert.ok(Number(d.retryAfter) > 0, `${d.what}: Retry-After`);
  }
  for (const r of readiness) assert.equal(r.status, 'degraded');
  assert.ok(backAt !== null, 'back by itself once the server is a primary again');
  // Every success counted, plus at most what the four threads hold unused (the slack, 0.5 % of 100,000).
  assert.ok(counted >= ok && counted <= ok + 500, `Redis counts ${counted} for ${ok} successes`);
  for (const inst of c.instances) assert.match(inst.serve!.stderr(), /answers READONLY/);
});
