/**
 * REST from worker threads behind one exclusive port: daily quotas stay exact across
 * workers, a revocation applies to the next request in every worker, a worker that fails is replaced
 * without taking the others down, and a build published under load is adopted by every worker with
 * each response wholly from one build.
 */
import { after, before, test } from 'node:test';
import { connect, type Socket } from 'node:net';
import assert from 'node:assert/strict';
import type { Services } from '../../src/cli/services.ts';
import { createKey, revokeKey } from '../../src/policy/api-keys.ts';
import { eventually } from '../helpers/eventually.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';
import { statusLine } from '../helpers/status-line.ts';

let svc: TestServices;
let services: Services;
let base = '';

before(async () => {
  svc = await startTestServices({ limits: { enterprise: 1_000_000 }, workers: 2 });
  services = svc.services;
  base = svc.restUrl;
});
after(() => svc?.close());

const key = async (tier: 'free' | 'pro' | 'enterprise', userId: string): Promise<{ plaintext: string; keyId: string }> => {
  const k = await createKey(services.store, { tier, userId, label: 'pool', now: Date.now() });
  return { plaintext: k.plaintext, keyId: k.record.id };
};

test('400 concurrent requests on a Free key across 2 workers: exactly 100 succeed', { timeout: 60_000 }, async () => {
  assert.equal(services.restPool?.serving, 2);
  const k = await key('free', 'user-pool-free');
  const statuses = await Promise.all(
    Array.from({ length: 400 }, async () => {
      const r = await fetch(`${base}/v1/health/years`, { headers: { authorization: `Bearer ${k.plaintext}` } });
      await r.arrayBuffer();
      return r.status;
    }),
  );
  assert.equal(statuses.filter((s) => s === 200).length, 100);
  assert.equal(statuses.filter((s) => s === 429).length, 300);
  // MCP in the main thread sees the same counter.
  assert.equal(services.quota.peek('user-pool-free', 'free').remaining, 0);
});

test('a revocation applies to the next request in every worker, under load', { timeout: 60_000 }, async () => {
  const k = await key('pro', 'user-pool-revoke');
  let revokedAt = Number.POSITIVE_INFINITY;
  const late: number[] = [];
  let stop = false;
  const loops = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const started = performance.now();
      const r = await fetch(`${base}/v1/health/years`, { headers: { authorization: `Bearer ${k.plaintext}` } });
      await r.arrayBuffer();
      // A request sent 5 ms after the revocation committed must be refused, whichever worker takes it.
      if (started > revokedAt + 5 && r.status !== 401) late.push(r.status);
    }
  });
  await new Promise((r) => setTimeout(r, 300));
  await revokeKey(services.store, k.keyId, Date.now());
  revokedAt = performance.now();
  await new Promise((r) => setTimeout(r, 400));
  stop = true;
  await Promise.all(loops);
  assert.deepEqual(late, [], 'no request after the revocation was served');
});

test('a worker that fails is logged and replaced; the other keeps serving', { timeout: 60_000 }, async () => {
  const pool = services.restPool!;
  const k = await key('enterprise', 'user-pool-fail');
  const before = pool.replaced;
  pool.failWorker(0);
  let ok = 0;
  for (let i = 0; i < 50; i++) {
    try {
      const r = await fetch(`${base}/v1/health/years`, { headers: { authorization: `Bearer ${k.plaintext}` } });
      await r.arrayBuffer();
      if (r.status === 200) ok++;
    } catch {
      // A keep-alive connection held by the failing worker is closed with it.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(ok >= 45, `${ok} of 50 requests served while a worker failed and was replaced`);
  for (let i = 0; i < 100 && (pool.replaced === before || pool.serving < 2); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(pool.replaced, before + 1);
  assert.equal(pool.serving, 2);
});

test('a build published under load is adopted by every worker, each response from one build', { timeout: 120_000 }, async () => {
  const k = await key('enterprise', 'user-pool-swap');
  const seen: Array<{ status: number; etag: string; freshness: string | null }> = [];
  let stop = false;
  const loops = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const r = await fetch(`${base}/v1/health/plans?zip=77002&age=40`, { headers: { authorization: `Bearer ${k.plaintext}` } });
      const body = (await r.json()) as { data_freshness?: string };
      seen.push({ status: r.status, etag: r.headers.get('etag') ?? '', freshness: body.data_freshness ?? null });
    }
  });
  await new Promise((r) => setTimeout(r, 200));
  const b = await buildFixtureVariant(svc.dir, svc.buildsRoot, '2024-12-01');
  // Both workers answer /readyz in turn: wait until several answers in a row name the new build.
  let streak = 0;
  const t0 = performance.now();
  while (streak < 6 && performance.now() - t0 < 3000) {
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { builds: Record<string, string> };
    streak = ready.builds['2025'] === b ? streak + 1 : 0;
  }
  assert.equal(streak, 6, 'every worker serves the new build within 3 s');
  await new Promise((r) => setTimeout(r, 200));
  stop = true;
  await Promise.all(loops);
  assert.deepEqual(
    seen.filter((s) => s.status !== 200),
    [],
  );
  const freshnessByVersion = new Map<string, Set<string>>();
  for (const s of seen) {
    const v = /^W\/"([0-9a-f]+)-/.exec(s.etag)![1]!;
    if (!freshnessByVersion.has(v)) freshnessByVersion.set(v, new Set());
    freshnessByVersion.get(v)!.add(s.freshness ?? '');
  }
  assert.equal(freshnessByVersion.size, 2, 'responses from the old and the new build');
  for (const [v, f] of freshnessByVersion)
    assert.equal(f.size, 1, `ETag version ${v} always comes with one data_freshness: ${[...f].join(' | ')}`);
});

test('the REST connection cap holds with workers: split between them, extra connections closed at once', { timeout: 60_000 }, async (t) => {
  const capped = await startTestServices({ workers: 2, restMaxConnections: 200 });
  t.after(() => capped.close());
  const port = capped.services.restPort;
  let closed = 0;
  const sockets: Socket[] = [];
  for (let i = 0; i < 400; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.on('close', () => closed++);
    sockets.push(s);
  }
  await eventually('the connections over the cap are closed by the server', () => closed >= 195, 3000);
  // The rest are kept: each is served (one closed over the cap gets no answer).
  const outcomes = await Promise.all(sockets.map((s) => statusLine(s)));
  const served = outcomes.filter((o) => o === 'HTTP/1.1 200 OK').length;
  assert.equal(served + outcomes.filter((o) => o === 'closed').length, 400, `each connection served or closed: ${[...new Set(outcomes)]}`);
  assert.ok(served >= 195 && served <= 205, `${served} of 400 served: the cap of 200 is split, 100 per worker`);
  for (const s of sockets) s.destroy();
  await eventually('new connections are served once the flood ends', async () => {
    const r = await fetch(`${capped.restUrl}/healthz`).catch(() => null);
    await r?.arrayBuffer();
    return r?.status === 200;
  });
});
