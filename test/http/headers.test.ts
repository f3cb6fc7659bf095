/**
 * @module Response headers through a real server (docs/compatibility.md#response-headers): request ids, weak
 * ETags and conditional requests, HEAD, CORS preflight, Link and the rate-limit trio.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BASE, expectOk, expectProblem, nextMidnightSeconds, parseLinkHeader, UUID_V4 } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-headers-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SEARCH = '/v1/health/plans?zip=77002&age=35';
const preflight = (path: string) =>
  s.get(path, {
    method: 'OPTIONS',
    tier: null,
    headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  });

describe('X-Request-Id', () => {
  /** One response of every kind, each request carrying `inbound` as X-Request-Id when given. */
  const everyKind = async (inbound?: string): Promise<Array<[string, Response]>> => {
    const h = (headers: Record<string, string> = {}): Record<string, string> =>
      inbound === undefined ? headers : { ...headers, 'x-request-id': inbound };
    return [
      ['200', await s.get(SEARCH, { headers: h() })],
      ['304', await s.get('/v1/health/years', { headers: h({ 'if-none-match': '*' }) })],
      ['400', await s.get('/v1/health/plans?zip=1&age=1', { headers: h() })],
      ['401', await s.get(SEARCH, { tier: null, headers: h() })],
      ['402', await s.get('/v1/health/plans/11111TX0010001-01', { tier: 'free', headers: h() })],
      ['404 resource', await s.get('/v1/health/zips/00000', { headers: h() })],
      ['404 route', await s.get('/v1/nothing/here', { headers: h() })],
      ['405', await s.get(SEARCH, { method: 'POST', headers: h() })],
      ['406', await s.get(SEARCH, { headers: h({ accept: 'text/html' }) })],
      ['HEAD', await s.get(SEARCH, { method: 'HEAD', headers: h() })],
      ['openapi', await s.get('/v1/openapi.json', { tier: null, headers: h() })],
      ['healthz', await s.get('/healthz', { tier: null, headers: h() })],
      ['readyz', await s.get('/readyz', { tier: null, headers: h() })],
      ['problem page', await s.get('/problems/validation-error', { tier: null, headers: h() })],
      [
        'preflight',
        await s.get('/v1/health/plans', {
          method: 'OPTIONS',
          tier: null,
          headers: h({
            origin: 'https://app.example',
            'access-control-request-method': 'GET',
            'access-control-request-headers': 'authorization',
          }),
        }),
      ],
    ];
  };

  test('is a fresh UUID v4 on every response, errors included, when the request has no usable id', async () => {
    for (const inbound of [undefined, 'not safe!', 'x'.repeat(129)]) {
      const seen = new Set<string>();
      for (const [label, res] of await everyKind(inbound)) {
        const id = res.headers.get('x-request-id');
        assert.ok(id !== null && UUID_V4.test(id), `${label} (inbound ${String(inbound)}): X-Request-Id ${id}`);
        assert.ok(!seen.has(id), `${label}: fresh id`);
        seen.add(id);
        await res.arrayBuffer();
      }
    }
  });

  test('echoes a safe inbound id (≤ 128 characters of [A-Za-z0-9._:-]) on every response, errors included', async () => {
    const inbound = 'gw-7f3a:2026.11.20_0001';
    for (const [label, res] of await everyKind(inbound)) {
      assert.equal(res.headers.get('x-request-id'), inbound, label);
      await res.arrayBuffer();
    }
  });
});

describe('ETag and If-None-Match', () => {
  test('200 carries a weak ETag, stable for the same request and different for another query', async () => {
    const a = await s.get(SEARCH);
    const etag = a.headers.get('etag');
    assert.match(etag ?? '', /^W\/"[^"]+"$/);
    await expectOk(a, 'searchPlans');
    assert.equal((await s.get(SEARCH)).headers.get('etag'), etag, 'same request, same ETag');
    assert.equal((await s.get(SEARCH, { tier: 'enterprise' })).headers.get('etag'), etag, 'the tier is not part of the ETag');
    assert.notEqual((await s.get('/v1/health/plans?zip=77002&age=36')).headers.get('etag'), etag, 'other age');
    assert.notEqual((await s.get('/v1/health/plans?zip=77002&age=35&sort_order=desc')).headers.get('etag'), etag, 'other order');
    assert.notEqual((await s.get('/v1/health/plans?zip=77002&age=35&per_page=2')).headers.get('etag'), etag, 'other page size');
  });

  test('If-None-Match with the ETag is 304 with no body, the ETag and the caching headers', async () => {
    const first = await s.get(SEARCH);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    for (const inm of [etag, etag.replace(/^W\//, ''), `"other", ${etag}`, '*']) {
      const res = await s.get(SEARCH, { headers: { 'if-none-match': inm } });
      assert.equal(res.status, 304, `If-None-Match: ${inm}`);
      assert.equal(await res.text(), '');
      assert.equal(res.headers.get('etag'), etag);
      assert.equal(res.headers.get('cache-control'), 'private, no-cache');
      assert.equal(res.headers.get('vary'), 'Authorization');
      assert.equal(res.headers.get('content-type'), null);
      assert.ok(UUID_V4.test(res.headers.get('x-request-id') ?? ''));
      assert.ok(res.headers.get('ratelimit-remaining') !== null);
      assert.deepEqual(parseLinkHeader(res.headers.get('link')), parseLinkHeader(first.headers.get('link')));
    }
  });

  test('a non-matching If-None-Match is a normal 200; errors ignore If-None-Match', async () => {
    const res = await s.get(SEARCH, { headers: { 'if-none-match': 'W/"nope"' } });
    await expectOk(res, 'searchPlans');
    await expectProblem(await s.get('/v1/health/zips/00000', { headers: { 'if-none-match': '*' } }), 404, '/v1/health/zips/00000');
  });

  test('200 carries Cache-Control private, no-cache and Vary: Authorization (and Accept-Encoding where codings exist)', async () => {
    const res = await s.get('/v1/health/years');
    assert.equal(res.headers.get('cache-control'), 'private, no-cache');
    // Cached immutable responses have compressed variants (src/http/compression.ts).
    assert.equal(res.headers.get('vary'), 'Authorization, Accept-Encoding');
    await res.arrayBuffer();
    const search = await s.get(SEARCH);
    assert.equal(search.headers.get('vary'), 'Authorization', 'search pages are never compressed');
    await search.arrayBuffer();
  });
});

describe('HEAD', () => {
  const ROUTES: Array<[string, 'pro' | 'free' | null]> = [
    [SEARCH, 'pro'],
    ['/v1/health/plans?zip=77002&age=35&per_page=2', 'pro'],
    ['/v1/health/plans/11111TX0010001-01', 'pro'],
    ['/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01&zip=77002&age=40', 'pro'],
    ['/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=40&scenario=high', 'pro'],
    ['/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=1&ages=40', 'pro'],
    ['/v1/health/plans/crosswalk?plan_id=11111TX0010001&year=2025&state=TX', 'pro'],
    ['/v1/health/zips/77477', 'pro'],
    ['/v1/health/zip/77477', 'pro'],
    ['/v1/health/years', 'pro'],
    ['/v1/health/issuers?state=TX', 'pro'],
    ['/v1/openapi.json', null],
    ['/healthz', null],
    ['/readyz', null],
    ['/problems/validation-error', null],
    ['/v1/health/years', null],
    ['/v1/health/plans/11111TX0010001-01', 'free'],
    ['/v1/health/plans?zip=1&age=1', 'pro'],
    ['/v1/health/unknown', 'pro'],
  ];
  const VARYING = new Set(['date', 'x-request-id', 'ratelimit-remaining']);
  for (const [path, tier] of ROUTES) {
    test(`HEAD ${path} (${tier ?? 'no key'}) = GET without the body`, async () => {
      // Identity asked for: fetch would decode a compressed body, whose content-length is the encoded one
      // (compressed HEAD: test/http/compression.test.ts).
      const identity = { 'accept-encoding': 'identity' };
      const get = await s.get(path, { tier, headers: identity });
      const body = Buffer.from(await get.arrayBuffer());
      const head = await s.get(path, { tier, method: 'HEAD', headers: identity });
      assert.equal(head.status, get.status);
      assert.equal((await head.arrayBuffer()).byteLength, 0, 'no body');
      assert.equal(head.headers.get('content-length'), String(body.byteLength), 'content-length of the GET body');
      const strip = (h: Headers) => [...h].filter(([k]) => !VARYING.has(k));
      assert.deepEqual(strip(head.headers), strip(get.headers));
      assert.ok(UUID_V4.test(head.headers.get('x-request-id') ?? ''));
    });
  }
});

describe('CORS', () => {
  for (const path of ['/v1/health/plans', '/v1/health/plans/11111TX0010001-01', '/v1/health/zips/77002', '/v1/openapi.json']) {
    test(`preflight on ${path}: 204, any origin, exposed headers, no key needed`, async () => {
      const res = await preflight(path);
      assert.equal(res.status, 204);
      assert.equal(await res.text(), '');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      const methods = (res.headers.get('access-control-allow-methods') ?? '').split(',').map((x) => x.trim());
      assert.ok(methods.includes('GET') && methods.includes('HEAD'), `allow-methods ${methods.join()}`);
      const allowHeaders = (res.headers.get('access-control-allow-headers') ?? '')
        .toLowerCase()
        .split(',')
        .map((x) => x.trim());
      for (const h of ['authorization', 'if-none-match']) assert.ok(allowHeaders.includes(h), `allow-headers has ${h}`);
      const exposed = (res.headers.get('access-control-expose-headers') ?? '')
        .toLowerCase()
        .split(',')
        .map((x) => x.trim());
      for (const h of ['etag', 'link', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'])
        assert.ok(exposed.includes(h), `exposes ${h}`);
      assert.equal(res.headers.get('ratelimit-limit'), null, 'a preflight is not authenticated');
    });
  }

  test('actual responses, errors included, carry Access-Control-Allow-Origin and the exposed list', async () => {
    for (const res of [await s.get(SEARCH), await s.get(SEARCH, { tier: null }), await s.get('/v1/health/zips/00000')]) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /ETag/);
      await res.arrayBuffer();
    }
  });
});

describe('Link', () => {
  const expectMirrors = async (path: string): Promise<Array<[string, string]>> => {
    const res = await s.get(path);
    const link = parseLinkHeader(res.headers.get('link'));
    const body = await res.json();
    const expected = Object.entries(body._links as Record<string, { href: string; templated?: boolean }>)
      .filter(([, l]) => l.templated !== true)
      .map(([rel, l]) => [l.href, rel] as [string, string]);
    assert.deepEqual(link, [...expected, [`${BASE}/v1/openapi.json`, 'service-desc']], path);
    return link;
  };

  test('mirrors the non-templated _links and ends with service-desc', async () => {
    const first = await expectMirrors('/v1/health/plans?zip=77002&age=35&per_page=2');
    assert.deepEqual(
      first.map(([, rel]) => rel),
      ['self', 'first', 'next', 'last', 'stats', 'service-desc'],
    );
    const second = await expectMirrors('/v1/health/plans?zip=77002&age=35&per_page=2&page=2');
    assert.deepEqual(
      second.map(([, rel]) => rel),
      ['self', 'first', 'next', 'prev', 'last', 'stats', 'service-desc'],
    );
    const detail = await expectMirrors('/v1/health/plans/11111TX0010001-01');
    assert.ok(!detail.some(([, rel]) => rel === 'collection'), 'templated collection link left out');
    const oop = await expectMirrors('/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=40&scenario=low');
    assert.deepEqual(
      oop.map(([, rel]) => rel),
      ['self', 'plan', 'service-desc'],
    );
    for (const p of [
      '/v1/health/zips/77002',
      '/v1/health/years',
      '/v1/health/issuers?state=TX',
      '/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=1&ages=40',
    ]) {
      const l = await expectMirrors(p);
      assert.equal(l.at(-1)![1], 'service-desc');
    }
  });
});

describe('rate-limit headers', () => {
  test('every authenticated response carries Limit, Remaining and Reset (next 00:00 UTC as Unix seconds)', async () => {
    const reset = String(nextMidnightSeconds(s.now));
    assert.equal(reset, String(Date.parse('2026-11-21T00:00:00Z') / 1000));
    const cases: Array<[string, 'free' | 'pro' | 'enterprise', string, Record<string, string>?]> = [
      ['/v1/health/years', 'free', '100'],
      ['/v1/health/years', 'pro', '10000'],
      ['/v1/health/years', 'enterprise', '100000'],
      ['/v1/health/plans?zip=1&age=1', 'pro', '10000'],
      ['/v1/health/plans/11111TX0010001-01', 'free', '100'],
      ['/v1/health/zips/00000', 'enterprise', '100000'],
      ['/v1/health/years', 'pro', '10000', { 'if-none-match': '*' }],
    ];
    for (const [path, tier, limit, headers] of cases) {
      const res = await s.get(path, { tier, headers });
      assert.equal(res.headers.get('ratelimit-limit'), limit, `${tier} ${path}`);
      assert.match(res.headers.get('ratelimit-remaining') ?? '', /^\d+$/);
      assert.equal(res.headers.get('ratelimit-reset'), reset);
      assert.equal(res.headers.get('retry-after'), null, 'Retry-After only on refusals');
      await res.arrayBuffer();
    }
  });

  test('Remaining goes down by one per counted request', async () => {
    const a = Number((await s.get('/v1/health/years', { tier: 'enterprise' })).headers.get('ratelimit-remaining'));
    const b = Number((await s.get('/v1/health/zips/77002', { tier: 'enterprise' })).headers.get('ratelimit-remaining'));
    const c = Number((await s.get('/v1/health/plans?zip=77002&age=30', { tier: 'enterprise' })).headers.get('ratelimit-remaining'));
    assert.deepEqual([b, c], [a - 1, a - 2]);
  });
});
