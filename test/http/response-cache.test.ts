/**
 * The response cache of years, ZIPs, issuers and plan detail: keyed by the canonical request, bounded
 * in bytes (hardening issue, finding 9: `?u=N` × 100k took RSS from 275 to 511 MB; unknown parameters
 * are now a 400, but a known one still has many spellings).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SPELLINGS, ResponseCache } from '../../src/http/response-cache.ts';
import { startFixtureServer } from '../helpers/rest-server.ts';

const entry = (bytes: number, tag = ''): { bytes: number; tag: string } => ({ bytes, tag });

test('spellings of one canonical request share one entry, and only a few spellings are remembered', () => {
  const cache = new ResponseCache<{ bytes: number; tag: string }>(1 << 20);
  cache.set('getPlan?plan_id="A"&year=2025', 'raw-0', entry(2000, 'A'));
  for (let i = 1; i < 1000; i++) assert.equal(cache.get('getPlan?plan_id="A"&year=2025', `raw-${i}`)?.tag, 'A');
  assert.equal(cache.size, 1);
  for (let i = 0; i < MAX_SPELLINGS; i++) assert.equal(cache.bySpelling(`raw-${i}`)?.tag, 'A', `spelling ${i} is a fast hit`);
  assert.equal(cache.bySpelling(`raw-${MAX_SPELLINGS}`), undefined, 'later spellings go through validation');
  assert.ok(cache.bytes < 4000, `bytes counted: ${cache.bytes}`);
});

test('the byte budget holds: the oldest entries are evicted with their spellings', () => {
  const budget = 100_000;
  const cache = new ResponseCache<{ bytes: number; tag: string }>(budget);
  for (let i = 0; i < 1000; i++) {
    cache.set(`k${i}`, `s${i}`, entry(2500, String(i)));
    assert.ok(cache.bytes <= budget, `over budget after ${i}: ${cache.bytes}`);
  }
  assert.ok(cache.size > 30 && cache.size < 40, `about budget / entry size entries: ${cache.size}`);
  assert.equal(cache.get('k999', 's999')?.tag, '999', 'the newest is kept');
  assert.equal(cache.get('k0', 's0'), undefined, 'the oldest is gone');
  assert.equal(cache.bySpelling('s0'), undefined, 'with its spelling');
  cache.set('huge', 'h', entry(budget * 2));
  assert.equal(cache.get('huge', 'h'), undefined, 'an entry larger than the budget is not kept');
  assert.ok(cache.bytes <= budget);
});

test('a server answering 5,000 spellings of one plan detail keeps one cache entry, same ETag', { timeout: 60_000 }, async (t) => {
  const s = await startFixtureServer();
  t.after(() => s.close());
  const first = await s.get('/v1/health/plans/11111TX0010001-01');
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag');
  const body = await first.text();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < 5000) {
        const n = next++;
        // Leading zeros spell the same year: 5,000 spellings of one canonical request.
        const r = await s.get(`/v1/health/plans/11111TX0010001-01?year=${'0'.repeat(n)}2025`);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('etag'), etag);
        assert.equal(await r.text(), body);
      }
    }),
  );
  const stats = s.server.responseCacheStats();
  assert.equal(stats.entries, 1, 'one canonical request, one entry');
  assert.ok(stats.bytes < 16_384, `bytes counted: ${stats.bytes}`);
});

test('the response cache respects a small configured budget while serving many distinct resources', { timeout: 60_000 }, async (t) => {
  const s = await startFixtureServer({ responseCacheBytes: 20_000 });
  t.after(() => s.close());
  for (const zip of ['77002', '77001', '10001', '94103', '60601', '30301']) {
    const r = await s.get(`/v1/health/zips/${zip}`);
    await r.arrayBuffer();
    assert.ok(s.server.responseCacheStats().bytes <= 20_000);
  }
  for (let i = 0; i < 20; i++) {
    const r = await s.get('/v1/health/plans/11111TX0010001-01');
    assert.equal(r.status, 200);
    await r.arrayBuffer();
    assert.ok(s.server.responseCacheStats().bytes <= 20_000);
  }
});
