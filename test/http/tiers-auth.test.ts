/**
 * @module Tiers and authentication through a real server: the tier × endpoint matrix, the Pro-only
 * search parameters (docs/compatibility.md#access-matrix) and Bearer API keys
 * (docs/compatibility.md#authentication), including what does not count against the daily quota
 * (docs/compatibility.md#daily-counter).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createKey, revokeKey } from '../../src/policy/api-keys.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { expectOk, expectProblem, UPGRADE, type OperationId } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-tiers-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const TIERS: readonly Tier[] = ['free', 'pro', 'enterprise'];

describe('tier × endpoint matrix', () => {
  const PRO_ONLY: Array<[string, OperationId | null, string]> = [
    ['/v1/health/plans/11111TX0010001-01', 'getPlanById', 'Plan details require a Pro subscription.'],
    [
      '/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01&zip=77002&age=40',
      'comparePlans',
      'Plan comparison requires a Pro subscription.',
    ],
    [
      '/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=40&scenario=medium',
      'estimateOop',
      'Out-of-pocket estimates require a Pro subscription.',
    ],
    [
      '/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=1&ages=40',
      'calculateAptc',
      'APTC estimates require a Pro subscription.',
    ],
    [
      '/v1/health/ichra/affordability?zip=77002&age=40&household_income=52000&hra_monthly=300',
      'checkIchraAffordability',
      'ICHRA affordability tests require a Pro subscription.',
    ],
    // No crosswalk in this build: Pro gets past the gate to the 404 saying so (the 200 is in crosswalk.test.ts).
    ['/v1/health/plans/crosswalk?plan_id=11111TX0010001&year=2025&state=TX', null, 'Plan crosswalk requires a Pro subscription.'],
  ];
  for (const [path, opId, detail] of PRO_ONLY) {
    const instance = path.split('?')[0]!;
    test(`${instance}: Free 402 with required_tier and upgrade; Pro and Enterprise pass`, async () => {
      const body = await expectProblem(await s.get(path, { tier: 'free' }), 402, path, { detail });
      assert.equal(body.title, 'Payment Required');
      assert.equal(body.required_tier, 'pro');
      assert.equal(body.upgrade, UPGRADE);
      for (const tier of ['pro', 'enterprise'] as const) {
        const res = await s.get(path, { tier });
        if (opId !== null) await expectOk(res, opId, tier);
        else await expectProblem(res, 404, path, { detail: 'Crosswalk data for 2025 to 2026 is not loaded on this server.' });
      }
    });
  }

  test('the endpoint tier gate (step 6) comes before validation (step 7)', async () => {
    await expectProblem(await s.get('/v1/health/plans/compare?ids=x&zip=1&age=abc', { tier: 'free' }), 402, '/v1/health/plans/compare', {
      detail: 'Plan comparison requires a Pro subscription.',
    });
    await expectProblem(await s.get('/v1/health/plans/99999XX0000000-00', { tier: 'free' }), 402, '/v1/health/plans/99999XX0000000-00');
    await expectProblem(await s.get('/v1/health/plans/aptc-estimate', { tier: 'free' }), 402, '/v1/health/plans/aptc-estimate');
  });

  const OPEN: Array<[string, OperationId]> = [
    ['/v1/health/plans?zip=77002&age=40', 'searchPlans'],
    ['/v1/health/zips/77002', 'lookupZip'],
    ['/v1/health/zip/77477', 'lookupZip'],
    ['/v1/health/years', 'getAvailableYears'],
    ['/v1/health/issuers?state=TX', 'listIssuers'],
  ];
  for (const [path, opId] of OPEN) {
    test(`${path} is open to every tier`, async () => {
      for (const tier of TIERS) await expectOk(await s.get(path, { tier }), opId, tier);
    });
  }
});

describe('Pro-only search parameters', () => {
  const base = '/v1/health/plans?zip=77002&age=40';
  const PRO_PARAMS: Array<[string, string]> = [
    ['issuer=lone', 'issuer'],
    ['issuer=GULF', 'issuer'],
    ['hsa_eligible=true', 'hsa_eligible'],
    ['hsa_eligible=false', 'hsa_eligible'],
    ['max_premium=500', 'max_premium'],
    ['max_deductible=5000', 'max_deductible'],
    ['sort_by=deductible', 'sort_by'],
    ['sort_by=max_oop', 'sort_by'],
    ['sort_by=name', 'sort_by'],
    ['sort=name', 'sort_by'],
    ['income=30000&household_size=1', 'income, household_size'],
  ];
  for (const [q, names] of PRO_PARAMS) {
    test(`${q}: Free 402 naming ${names}; Pro and Enterprise 200`, async () => {
      const path = `${base}&${q}`;
      const plural = names.includes(',');
      const body = await expectProblem(await s.get(path, { tier: 'free' }), 402, path, {
        detail: `The parameter${plural ? 's' : ''} ${names} require${plural ? '' : 's'} a Pro subscription.`,
      });
      assert.equal(body.required_tier, 'pro');
      assert.equal(body.upgrade, UPGRADE);
      for (const tier of ['pro', 'enterprise'] as const) await expectOk(await s.get(path, { tier }), 'searchPlans', `${tier} ${q}`);
    });
  }

  test('the Pro filters do filter', async () => {
    const get = async (q: string) =>
      (await expectOk(await s.get(`${base}&${q}`), 'searchPlans', q))._embedded.plans as Array<Record<string, any>>;
    const lone = await get('issuer=lone');
    assert.ok(lone.length > 0 && lone.every((p) => p.issuer === 'Lone Star Health'));
    const hsa = await get('hsa_eligible=true');
    assert.ok(hsa.length > 0 && hsa.every((p) => p.hsa_eligible === true));
    const noHsa = await get('hsa_eligible=false');
    assert.ok(noHsa.length > 0 && noHsa.every((p) => p.hsa_eligible === false));
    const cheap = await get('max_premium=500');
    assert.ok(cheap.length > 0 && cheap.every((p) => p.premium <= 500));
    const lowDed = await get('max_deductible=3000');
    assert.ok(lowDed.length > 0 && lowDed.every((p) => p.deductible.individual <= 3000));
  });

  test('sort_by=premium, sort_order=desc and order=desc are free', async () => {
    for (const q of [
      'sort_by=premium',
      'sort=premium',
      'sort_order=desc',
      'order=desc',
      'sort_by=premium&sort_order=desc',
      'metal_level=silver&plan_type=hmo&per_page=2&page=1',
    ]) {
      await expectOk(await s.get(`${base}&${q}`, { tier: 'free' }), 'searchPlans', q);
    }
  });

  test('the 402 names the Pro parameters in request order', async () => {
    const path = `${base}&max_premium=500&metal_level=silver&issuer=lone&sort_by=name&max_deductible=9000`;
    await expectProblem(await s.get(path, { tier: 'free' }), 402, path, {
      detail: 'The parameters max_premium, issuer, sort_by, max_deductible require a Pro subscription.',
    });
    const reversed = `${base}&household_size=1&hsa_eligible=true&income=20000`;
    await expectProblem(await s.get(reversed, { tier: 'free' }), 402, reversed, {
      detail: 'The parameters household_size, hsa_eligible, income require a Pro subscription.',
    });
  });
});

describe('authentication', () => {
  const path = '/v1/health/years';
  const INVALID =
    'Bearer realm="health-api", error="invalid_token", error_description="The API key is missing, malformed, unknown or revoked"';

  test('no Authorization header: 401 with a bare Bearer challenge (no error attribute)', async () => {
    const res = await s.get(path, { tier: null });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="health-api"');
    assert.equal(res.headers.get('ratelimit-limit'), null, 'no rate-limit headers before authentication');
    const body = await expectProblem(res, 401, path, { detail: 'Missing or invalid API key.' });
    assert.equal(body.title, 'Unauthorized');
  });

  test('another scheme counts as no credentials', async () => {
    const res = await s.get(path, { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="health-api"');
    await expectProblem(res, 401, path);
  });

  const BAD: Array<[string, string]> = [
    ['the docs placeholder', 'op_your_api_key_here_1234567890abcdefgh'],
    ['upper-case hex', `hpd_${'A'.repeat(40)}`],
    ['too short', `hpd_${'a'.repeat(39)}`],
    ['empty', ''],
    ['unknown well-formed key', `hpd_${'0'.repeat(40)}`],
    ['a JWT', 'eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJ1c2VyLXBybyJ9.c2lnbmF0dXJl'],
  ];
  for (const [label, value] of BAD) {
    test(`${label}: 401 with error="invalid_token"`, async () => {
      const res = await s.get(path, { headers: { authorization: `Bearer ${value}` } });
      assert.equal(res.headers.get('www-authenticate'), INVALID);
      await expectProblem(res, 401, path, { detail: 'Missing or invalid API key.' });
    });
  }

  test('the scheme name is case-insensitive', async () => {
    await expectOk(await s.get(path, { headers: { authorization: `bearer ${s.keys.pro}` } }), 'getAvailableYears');
  });

  test('a revoked key stops working on the next request, other keys of the user keep working', async () => {
    const a = await createKey(s.store, { tier: 'pro', userId: 'user-revoke', label: 'a', now: s.now });
    const b = await createKey(s.store, { tier: 'pro', userId: 'user-revoke', label: 'b', now: s.now });
    const auth = (k: string) => ({ headers: { authorization: `Bearer ${k}` } });
    await expectOk(await s.get(path, auth(a.plaintext)), 'getAvailableYears');
    await revokeKey(s.store, a.record.id, s.now);
    const res = await s.get(path, auth(a.plaintext));
    assert.equal(res.headers.get('www-authenticate'), INVALID);
    await expectProblem(res, 401, path);
    await expectOk(await s.get(path, auth(b.plaintext)), 'getAvailableYears');
  });

  test('401, unknown routes, 405 and 406 do not count against the quota', async () => {
    const k = await createKey(s.store, { tier: 'free', userId: 'user-uncounted', label: 'a', now: s.now });
    const revoked = await createKey(s.store, { tier: 'free', userId: 'user-uncounted', label: 'b', now: s.now });
    await revokeKey(s.store, revoked.record.id, s.now);
    const auth = (key: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${key}`, ...extra } });
    const remaining = async () => Number((await s.get(path, auth(k.plaintext))).headers.get('ratelimit-remaining'));
    const start = await remaining();
    assert.equal(start, 99);
    for (let i = 0; i < 3; i++) {
      assert.equal((await s.get(path, auth(revoked.plaintext))).status, 401);
      assert.equal((await s.get('/v1/health/nope', auth(k.plaintext))).status, 404);
      assert.equal((await s.get(path, { ...auth(k.plaintext), method: 'POST' })).status, 405);
      assert.equal((await s.get(path, { ...auth(k.plaintext), method: 'DELETE' })).status, 405);
      assert.equal((await s.get(path, auth(k.plaintext, { accept: 'text/html' }))).status, 406);
      assert.equal((await s.get('/v1/openapi.json', auth(k.plaintext))).status, 200);
      const pre = await s.get(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', authorization: `Bearer ${k.plaintext}` },
      });
      assert.equal(pre.status, 204);
    }
    assert.equal(await remaining(), start - 1, 'only the two counted requests were counted');
  });

  test('400, 402, 404 (resource) and HEAD do count', async () => {
    const k = await createKey(s.store, { tier: 'free', userId: 'user-counted', label: 'a', now: s.now });
    const auth = { headers: { authorization: `Bearer ${k.plaintext}` } };
    const remaining = (r: Response) => Number(r.headers.get('ratelimit-remaining'));
    const first = await s.get(path, auth);
    assert.equal(remaining(first), 99);
    const seq = [
      await s.get('/v1/health/plans?zip=1&age=30', auth), // 400
      await s.get('/v1/health/plans/11111TX0010001-01', auth), // 402
      await s.get('/v1/health/zips/00000', auth), // 404
      await s.get(path, { ...auth, method: 'HEAD' }), // 200 HEAD
    ];
    assert.deepEqual(
      seq.map((r) => r.status),
      [400, 402, 404, 200],
    );
    assert.deepEqual(seq.map(remaining), [98, 97, 96, 95]);
  });
});
