/**
 * The search cache (HPD_SEARCH_CACHE_MB): a cached page is the computed page (body, ETag, headers), every
 * request is still authenticated, tier-checked and counted against the quota, and the byte budget holds.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let buildsRoot: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-search-cache-'));
  buildsRoot = await buildFixture(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Headers that differ per request by design: the request id, the quota's remaining count, the date. */
const PER_REQUEST = new Set(['x-request-id', 'ratelimit-remaining', 'date']);
const stable = (r: Response): Array<[string, string]> => [...r.headers].filter(([k]) => !PER_REQUEST.has(k));

describe('search cache', () => {
  let cached: FixtureServer;
  let uncached: FixtureServer;
  before(async () => {
    cached = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state-a'), searchCacheBytes: 32 * 1024 * 1024 });
    uncached = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state-b'), searchCacheBytes: 0 });
  });
  after(async () => {
    await cached.close();
    await uncached.close();
  });

  test('a hit answers the computed page: body, ETag and headers, for every spelling (kept from the second sighting)', async () => {
    const path = '/v1/health/plans?zip=77002&age=40&per_page=2';
    // Spellings of one canonical request: one ETag, but the page echoes the request as spelled (self
    // link, page_size), so each is kept apart.
    const spellings = [
      path,
      '/v1/health/plans?per_page=2&age=40&zip=77002',
      '/v1/health/plans?zip=77002&age=040&page_size=2',
      `${path}&year=2025`,
    ];
    for (const p of [...spellings, ...spellings, ...spellings]) {
      const reference = await uncached.get(p);
      const body = await reference.text();
      assert.equal(reference.status, 200);
      const r = await cached.get(p);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), body, p);
      assert.deepEqual(stable(r), stable(reference), p);
    }
    assert.equal(cached.server.searchCacheStats().entries, spellings.length, 'one entry per spelling');
    assert.equal(uncached.server.searchCacheStats().entries, 0, 'a budget of 0 keeps nothing');
    const etag = (await uncached.get(path)).headers.get('etag')!;
    const conditional = await cached.get(path, { headers: { 'if-none-match': etag } });
    assert.equal(conditional.status, 304);
  });

  test('every hit is counted against the quota', async () => {
    const path = '/v1/health/plans?zip=77002&age=41';
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await cached.get(path, { tier: 'free' });
      assert.equal(r.status, 200);
      remaining.push(Number(r.headers.get('ratelimit-remaining')));
      await r.arrayBuffer();
    }
    assert.deepEqual(remaining, [remaining[0]!, remaining[0]! - 1, remaining[0]! - 2, remaining[0]! - 3]);
  });

  test('a page cached for a Pro caller (Pro parameters) is not served to Free', async () => {
    const path = '/v1/health/plans?zip=77002&age=42&sort_by=deductible';
    assert.equal((await cached.get(path, { tier: 'enterprise' })).status, 200);
    assert.equal((await cached.get(path, { tier: 'enterprise' })).status, 200, 'cached on its second sighting');
    const before = cached.server.searchCacheStats().entries;
    const free = await cached.get(path, { tier: 'free' });
    assert.equal(free.status, 402);
    const pro = await cached.get(path, { tier: 'pro' });
    assert.equal(pro.status, 200);
    assert.equal((await cached.get(path, { tier: 'free' })).status, 402, 'still not after a Pro caller');
    assert.ok(before > 0);
  });
});

test('the search cache stays within its byte budget', { timeout: 60_000 }, async () => {
  const budget = 40_000;
  const s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state-c'), searchCacheBytes: budget });
  try {
    // Each twice: a page is admitted on its second sighting.
    for (let age = 21; age <= 64; age++) {
      for (let k = 0; k < 2; k++) {
        const r = await s.get(`/v1/health/plans?zip=77002&age=${age}`);
        assert.equal(r.status, 200);
        await r.arrayBuffer();
      }
      assert.ok(s.server.searchCacheStats().bytes <= budget, `over budget at age ${age}: ${s.server.searchCacheStats().bytes}`);
    }
    assert.ok(s.server.searchCacheStats().entries > 0);
  } finally {
    await s.close();
  }
});
