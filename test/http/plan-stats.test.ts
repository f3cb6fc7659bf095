/**
 * @module The facets and ranges of a search against the search itself. Each facet's counts
 * add up to `total`, and `total` is the total of the same search. A facet value fed back as a filter
 * gives a search whose total is that value's count. The premium range is the first and last premium of
 * the premium-sorted search; the deductible range the lowest and highest deductible its plans show.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, expectProblem, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-stats-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Facet = Array<{ value: string | boolean; count: number }>;
const FACET_FILTER: Record<string, string> = {
  metal_level: 'metal_level',
  plan_type: 'plan_type',
  hsa_eligible: 'hsa_eligible',
  issuer: 'issuer',
};

async function search(query: string): Promise<Body> {
  return expectOk(await s.get(`/v1/health/plans?${query}&per_page=100`, { tier: 'pro' }), 'searchPlans');
}

describe('GET /v1/health/plans/stats', () => {
  for (const query of [
    `zip=${FIXTURE_ZIPS.harris}&age=40`,
    `zip=${FIXTURE_ZIPS.harris}&age=25`,
    `zip=${FIXTURE_ZIPS.harris}&age=40&metal_level=silver&income=30000&household_size=1`,
    `zip=${FIXTURE_ZIPS.harris}&age=40&max_premium=500`,
  ]) {
    test(`${query}: facets add up to the search's total, each value's count is its filtered search's total`, async () => {
      const stats = await expectOk(await s.get(`/v1/health/plans/stats?${query}`, { tier: 'pro' }), 'getPlanStats');
      const all = await search(query);
      assert.equal(stats.total, all.total);
      const facets = stats.facets as Record<string, Facet>;
      for (const [name, values] of Object.entries(facets)) {
        assert.equal(
          values.reduce((n, v) => n + v.count, 0),
          stats.total,
          `${name} adds up`,
        );
        // A facet the query already filters on has that one value.
        if (query.includes(`${FACET_FILTER[name]}=`)) {
          assert.equal(values.length, 1, name);
          continue;
        }
        for (const v of values) {
          // An issuer filter is a substring match; the fixture's issuer names are not substrings of one another.
          const filtered = await search(`${query}&${FACET_FILTER[name]}=${encodeURIComponent(String(v.value))}`);
          assert.equal(filtered.total, v.count, `${name}=${String(v.value)}`);
        }
      }
      const plans = (all._embedded as { plans: Body[] }).plans;
      const ranges = stats.ranges as Record<string, { min: number | null; max: number | null }>;
      assert.equal(ranges.premium!.min, plans[0]?.premium ?? null);
      assert.equal(ranges.premium!.max, plans.at(-1)?.premium ?? null);
      const deductibles = plans
        .map((p) => (p.deductible as { individual: number | null }).individual)
        .filter((d): d is number => typeof d === 'number');
      assert.deepEqual(ranges.deductible, {
        min: deductibles.length === 0 ? null : Math.min(...deductibles),
        max: deductibles.length === 0 ? null : Math.max(...deductibles),
      });
    });
  }

  test('the search collection links to its stats: paging and order left out, same total', async () => {
    const path = `/v1/health/plans?zip=${FIXTURE_ZIPS.harris}&age=40&sort_by=deductible&sort_order=desc&plan_type=hmo&per_page=2&page=2`;
    const body = await expectOk(await s.get(path, { tier: 'pro' }), 'searchPlans');
    const href = (body._links as Record<string, { href: string; type?: string }>).stats!;
    assert.equal(href.type, 'application/json');
    const url = new URL(href.href);
    assert.equal(`${url.pathname}${url.search}`, `/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40&plan_type=hmo`);
    const stats = await expectOk(await s.get(`${url.pathname}${url.search}`, { tier: 'pro' }), 'getPlanStats');
    assert.equal(stats.total, body.total);
  });

  test('nothing matches: total 0, empty facets, null ranges', async () => {
    const stats = await expectOk(
      await s.get(`/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40&max_premium=1`, { tier: 'pro' }),
      'getPlanStats',
    );
    assert.equal(stats.total, 0);
    assert.deepEqual(Object.values(stats.facets as Record<string, Facet>).flat(), []);
    assert.deepEqual(stats.ranges, { premium: { min: null, max: null }, deductible: { min: null, max: null } });
  });

  test('Free gets the figures; a Pro filter is a 402; paging and order are unknown here; links lead to the search', async () => {
    const body = await expectOk(await s.get(`/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40`, { tier: 'free' }), 'getPlanStats');
    const links = body._links as Record<string, { href: string }>;
    assert.match(links.search!.href, /\/v1\/health\/plans\?zip=77002&age=40$/);
    assert.match(links.self!.href, /\/v1\/health\/plans\/stats\?zip=77002&age=40$/);
    await expectProblem(
      await s.get(`/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40&max_premium=500`, { tier: 'free' }),
      402,
      '/v1/health/plans/stats',
    );
    await expectProblem(await s.get(`/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40&page=2`), 400, '/v1/health/plans/stats', {
      fields: ['page'],
    });
    await expectProblem(
      await s.get(`/v1/health/plans/stats?zip=${FIXTURE_ZIPS.harris}&age=40&income=30000`),
      400,
      '/v1/health/plans/stats',
      {
        fields: ['household_size'],
      },
    );
  });
});
