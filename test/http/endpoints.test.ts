/**
 * @module Success paths of every endpoint through a real server: status, media type, response schema
 * and the values the fixture dataset determines (docs/compatibility.md#endpoints), plus the OpenAPI document and
 * the health probes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OPERATIONS } from '../../src/operations/index.ts';
import { FIXTURE_PLANS, FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { BASE, expectOk, expectProblem } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-endpoints-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const premium = (scid: string, area: number, age: number): number => {
  const p = s.registry.get(2025)!.ds.premium(scid, area, age);
  assert.ok(p !== null, `${scid} priced in area ${area} at ${age}`);
  return p;
};

/** Plans of the fixture sold on exchange in Harris County ZIP 77002 (TXS001, TXS002, TXS003 partial). */
const HARRIS_77002 = FIXTURE_PLANS.filter((p) => p.state === 'TX' && !p.offExchangeOnly).map((p) => p.scid);

describe('GET /v1/health/plans', () => {
  test('lists the plans of the ZIP priced for the age, by premium, with the resolved location', async () => {
    const body = await expectOk(await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.harris}&age=35`), 'searchPlans');
    const ids: string[] = body._embedded.plans.map((p: { id: string }) => p.id);
    const adultPlans = FIXTURE_PLANS.filter((p) => HARRIS_77002.includes(p.scid) && p.metal !== 'Catastrophic' && p.childOnly !== true);
    for (const p of adultPlans) assert.ok(ids.includes(`${p.scid}-01`), `${p.scid}-01 listed`);
    assert.ok(!ids.includes('11111TX0010005-01'), 'no catastrophic plan at 35');
    assert.ok(!ids.some((id) => id.startsWith('33333TX0030002')), 'off-exchange-only plan not listed');
    assert.ok(!ids.some((id) => id.includes('AK')), 'no plan of another state');
    for (const p of body._embedded.plans) {
      assert.equal(p.premium, premium(p.id.slice(0, 14), 10, 35), `${p.id} premium`);
      assert.equal(p.premium_with_credit, null);
      assert.equal(p._links.self.href, `${BASE}/v1/health/plans/${p.id}?year=2025`);
      assert.equal(p.state, 'TX');
    }
    const premiums = body._embedded.plans.map((p: { premium: number }) => p.premium);
    assert.deepEqual(
      premiums,
      [...premiums].sort((a, b) => a - b),
    );
    assert.equal(body.total, ids.length);
    assert.equal(body.page, 1);
    assert.equal(body.per_page, 25);
    assert.equal(body.next_cursor, undefined);
    assert.equal(body.zip, '77002');
    assert.equal(body.state, 'TX');
    assert.equal(body.county, 'Harris County');
    assert.equal(body.county_fips, '48201');
    assert.equal(body.rating_area, 'Rating Area 10');
    assert.equal(body.multiple_areas, false);
    assert.equal(body.plan_year, 2025);
    assert.equal(body._links.self.href, `${BASE}/v1/health/plans?zip=77002&age=35`);
    assert.equal(body._links.self.type, 'application/json');
    assert.deepEqual(body._links.plan_detail, { href: `${BASE}/v1/health/plans/{plan_id}?year=2025`, templated: true });
  });

  test('a ZIP spanning two counties prices the primary one unless county_fips picks the other', async () => {
    const primary = await expectOk(await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.split}&age=40`), 'searchPlans');
    assert.equal(primary.county_fips, '48157');
    assert.equal(primary.rating_area, 'Rating Area 26');
    assert.equal(primary.multiple_areas, true);
    const harris = await expectOk(await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.split}&age=40&county_fips=48201`), 'searchPlans');
    assert.equal(harris.county_fips, '48201');
    assert.equal(harris.county, 'Harris County');
    assert.equal(harris.rating_area, 'Rating Area 10');
    assert.equal(harris.multiple_areas, true);
    for (const p of harris._embedded.plans) assert.equal(p.premium, premium(p.id.slice(0, 14), 10, 40));
    for (const p of primary._embedded.plans) assert.equal(p.premium, premium(p.id.slice(0, 14), 26, 40));
  });

  test('filters narrow the list; no match is an empty 200', async () => {
    const silver = await expectOk(await s.get('/v1/health/plans?zip=77002&age=40&metal_level=silver&plan_type=hmo'), 'searchPlans');
    assert.ok(silver._embedded.plans.length > 0);
    for (const p of silver._embedded.plans) {
      assert.equal(p.metal_level, 'silver');
      assert.equal(p.plan_type, 'hmo');
    }
    const xb = await expectOk(await s.get('/v1/health/plans?zip=77002&age=40&metal_level=expanded_bronze'), 'searchPlans');
    assert.deepEqual(
      xb._embedded.plans.map((p: { id: string }) => p.id),
      ['22222TX0020002-01'],
    );
    assert.equal(xb._embedded.plans[0].metal_level, 'expanded bronze');
    const none = await expectOk(await s.get('/v1/health/plans?zip=77002&age=40&metal_level=platinum'), 'searchPlans');
    assert.deepEqual(none._embedded.plans, []);
    assert.equal(none.total, 0);
  });
});

describe('GET /v1/health/plans/{plan_id}', () => {
  test('returns the full record of a variant', async () => {
    const body = await expectOk(await s.get('/v1/health/plans/11111TX0010001-01'), 'getPlanById');
    assert.equal(body.id, '11111TX0010001-01');
    assert.equal(body.standard_component_id, '11111TX0010001');
    assert.equal(body.name, 'Lone Star Silver 4500');
    assert.equal(body.issuer, 'Lone Star Health');
    assert.equal(body.issuer_id, '11111');
    assert.equal(body.state, 'TX');
    assert.equal(body.metal_level, 'silver');
    assert.equal(body.plan_type, 'hmo');
    assert.equal(body.service_area_id, 'TXS001');
    assert.equal(body.deductible.individual_tier1, 4500);
    assert.equal(body.max_out_of_pocket.individual_tier1, 9200);
    assert.deepEqual(body.sbc_scenarios.having_baby, { deductible: 1500, copayment: 10, coinsurance: 3300, limit: 60, total: 4870 });
    assert.equal(body.sbc_scenarios.having_diabetes.total, 2120);
    assert.equal(body.csr_variation, 'Standard Silver On Exchange Plan');
    assert.equal(body.plan_year, 2025);
    assert.deepEqual(body._links.self, { href: `${BASE}/v1/health/plans/11111TX0010001-01?year=2025`, type: 'application/json' });
    assert.deepEqual(body._links.collection, { href: `${BASE}/v1/health/plans{?zip,age,year}`, templated: true });
  });

  test('a CSR variant is its own record and a 14-character id resolves to -01', async () => {
    const csr = await expectOk(await s.get('/v1/health/plans/11111TX0010001-06?year=2025'), 'getPlanById');
    assert.equal(csr.id, '11111TX0010001-06');
    assert.equal(csr.deductible.individual_tier1, 500);
    const scid = await expectOk(await s.get('/v1/health/plans/11111TX0010001'), 'getPlanById');
    assert.equal(scid.id, '11111TX0010001-01');
    assert.equal(scid._links.self.href, `${BASE}/v1/health/plans/11111TX0010001-01?year=2025`);
  });
});

describe('GET /v1/health/plans/compare', () => {
  test('returns the plans in the order of ids with the lowest premium, deductible and MOOP named', async () => {
    const ids = ['22222TX0020001-01', '11111TX0010002-01', '11111TX0010001-01'];
    const body = await expectOk(await s.get(`/v1/health/plans/compare?ids=${ids.join(',')}&zip=77002&age=40`), 'comparePlans');
    assert.deepEqual(
      body._embedded.plans.map((p: { id: string }) => p.id),
      ids,
    );
    const priced = ids.map((id) => ({ id, premium: premium(id.slice(0, 14), 10, 40) }));
    for (const [i, p] of body._embedded.plans.entries()) assert.equal(p.premium, priced[i]!.premium);
    const cheapest = [...priced].sort((a, b) => a.premium - b.premium)[0]!.id;
    assert.equal(body.comparison_summary.lowest_premium, cheapest);
    assert.equal(body.comparison_summary.lowest_deductible, '11111TX0010002-01', '3,000 < 4,500 < 5,000');
    assert.equal(body.comparison_summary.lowest_moop, '11111TX0010002-01', '9,000 < 9,200');
    assert.equal(body.zip, '77002');
    assert.equal(body.county_fips, '48201');
    assert.equal(body.rating_area, 'Rating Area 10');
    assert.equal(body.plan_year, 2025);
    assert.equal(body._links.self.href, `${BASE}/v1/health/plans/compare?ids=${ids.join(',')}&zip=77002&age=40`);
  });

  test('spaces around commas are trimmed; ties go to the plan listed first', async () => {
    // Both MOOPs are 9,200: the first listed wins.
    const body = await expectOk(
      await s.get('/v1/health/plans/compare?ids=11111TX0010001-01%20,%2022222TX0020001-01&zip=77002&age=40'),
      'comparePlans',
    );
    assert.deepEqual(
      body._embedded.plans.map((p: { id: string }) => p.id),
      ['11111TX0010001-01', '22222TX0020001-01'],
    );
    assert.equal(body.comparison_summary.lowest_moop, '11111TX0010001-01');
  });
});

describe('GET /v1/health/plans/{plan_id}/oop-estimate', () => {
  const SBC_TOTALS: Record<string, number> = { having_baby: 4870, having_diabetes: 2120 };
  for (const scenario of ['low', 'medium', 'high', 'having_baby', 'having_diabetes'] as const) {
    test(`scenario ${scenario}: premium, breakdown and totals reconcile`, async () => {
      const path = `/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=40&scenario=${scenario}`;
      const body = await expectOk(await s.get(path), 'estimateOop');
      const monthly = premium('11111TX0010001', 10, 40);
      assert.equal(body.plan_id, '11111TX0010001-01');
      assert.equal(body.plan_name, 'Lone Star Silver 4500');
      assert.equal(body.metal_level, 'silver');
      assert.equal(body.scenario, scenario);
      assert.equal(body.age, 40);
      assert.equal(body.zip, '77002');
      assert.equal(body.county, 'Harris County');
      assert.equal(body.county_fips, '48201');
      assert.equal(body.multiple_areas, false);
      assert.equal(body.monthly_premium, monthly);
      const b = body.breakdown;
      assert.equal(b.annual_premium, Math.round(monthly * 12 * 100) / 100);
      assert.equal(
        Math.round((b.deductible_applied + b.copay_applied + b.coinsurance_applied + b.limits_or_exclusions) * 100) / 100,
        b.estimated_out_of_pocket,
      );
      assert.equal(body.estimated_annual_cost, Math.round((b.annual_premium + b.estimated_out_of_pocket) * 100) / 100);
      assert.ok(b.estimated_out_of_pocket <= 9200, 'capped at the MOOP');
      const sbc = scenario === 'having_baby' || scenario === 'having_diabetes';
      assert.equal(body.sbc_data_available, sbc);
      if (sbc) assert.equal(b.estimated_out_of_pocket, SBC_TOTALS[scenario]);
      else assert.equal(b.limits_or_exclusions, 0);
      assert.ok(body.notes.length > 0);
      assert.equal(body._links.self.href, `${BASE}${path}`);
      assert.equal(body._links.plan.href, `${BASE}/v1/health/plans/11111TX0010001-01?year=2025`);
    });
  }

  test('more use never costs less: low ≤ medium ≤ high', async () => {
    const cost = async (scenario: string): Promise<number> =>
      (await expectOk(await s.get(`/v1/health/plans/11111TX0010004-01/oop-estimate?zip=77002&age=40&scenario=${scenario}`), 'estimateOop'))
        .breakdown.estimated_out_of_pocket;
    const [low, medium, high] = [await cost('low'), await cost('medium'), await cost('high')];
    assert.ok(low <= medium && medium <= high, `${low} ≤ ${medium} ≤ ${high}`);
  });
});

describe('GET /v1/health/plans/aptc-estimate', () => {
  test('answers with the household working and links', async () => {
    const path = '/v1/health/plans/aptc-estimate?zip=77002&household_income=45000&household_size=3&ages=35,33,5';
    const body = await expectOk(await s.get(path), 'calculateAptc');
    assert.equal(body.household.income, 45000);
    assert.equal(body.household.size, 3);
    assert.deepEqual(
      body.members.map((m: { age: number }) => m.age),
      [35, 33, 5],
    );
    assert.equal(body.location.zip, '77002');
    assert.equal(body.location.state, 'TX');
    assert.equal(body.eligible, true);
    assert.equal(body._links.self.href, `${BASE}${path}`);
    assert.deepEqual(body._links.search, {
      href: `${BASE}/v1/health/plans?zip=77002&income=45000&household_size=3{&age}`,
      templated: true,
    });
  });

  test('income is an alias of household_income, rewritten in self', async () => {
    const body = await expectOk(
      await s.get('/v1/health/plans/aptc-estimate?zip=77002&income=45000&household_size=1&ages=35'),
      'calculateAptc',
    );
    assert.equal(body.household.income, 45000);
    assert.equal(body._links.self.href, `${BASE}/v1/health/plans/aptc-estimate?zip=77002&household_income=45000&household_size=1&ages=35`);
  });
});

describe('GET /v1/health/zips/{zip} and the /zip/{zip} alias', () => {
  test('lists every location of a ZIP, primary first', async () => {
    const body = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.split}`), 'lookupZip');
    assert.equal(body.zip, '77477');
    assert.equal(body.multiple_areas, true);
    assert.deepEqual(
      body.locations.map((l: { state: string; county_fips: string; county_name: string; rating_area_id: string; primary: boolean }) => [
        l.state,
        l.county_fips,
        l.county_name,
        l.rating_area_id,
        l.primary,
      ]),
      [
        ['TX', '48157', 'Fort Bend County', 'Rating Area 26', true],
        ['TX', '48201', 'Harris County', 'Rating Area 10', false],
      ],
    );
    assert.equal(body.plan_year, 2025);
    assert.deepEqual(body._links.self, { href: `${BASE}/v1/health/zips/77477`, type: 'application/json' });
    assert.deepEqual(body._links.search, { href: `${BASE}/v1/health/plans?zip=77477{&age,county_fips,year}`, templated: true });
  });

  test('a one-county ZIP has one primary location; AK and HI resolve too', async () => {
    for (const [zip, state, fips] of [
      [FIXTURE_ZIPS.harris, 'TX', '48201'],
      [FIXTURE_ZIPS.anchorage, 'AK', '02020'],
      [FIXTURE_ZIPS.honolulu, 'HI', '15003'],
    ] as const) {
      const body = await expectOk(await s.get(`/v1/health/zips/${zip}`), 'lookupZip', zip);
      assert.equal(body.multiple_areas, false);
      assert.equal(body.locations.length, 1);
      assert.equal(body.locations[0].state, state);
      assert.equal(body.locations[0].county_fips, fips);
      assert.equal(body.locations[0].primary, true);
    }
  });

  test('/v1/health/zip/{zip} serves the identical body, self naming the canonical URL', async () => {
    const canonical = await expectOk(await s.get('/v1/health/zips/77477'), 'lookupZip');
    const alias = await expectOk(await s.get('/v1/health/zip/77477'), 'lookupZip');
    assert.deepEqual(alias, canonical);
    assert.equal(alias._links.self.href, `${BASE}/v1/health/zips/77477`);
  });
});

describe('GET /v1/health/years and /v1/health/issuers', () => {
  test('years: the loaded year is the current and only one', async () => {
    const body = await expectOk(await s.get('/v1/health/years'), 'getAvailableYears');
    assert.deepEqual(body, {
      _links: { self: { href: `${BASE}/v1/health/years`, type: 'application/json' } },
      current_year: 2025,
      available_years: [2025],
      years: [{ year: 2025, states: ['AK', 'TX'], real_premium_states: [], modeled_premium_states: ['AK', 'TX'] }],
    });
  });

  test('issuers?state=TX: ordered by name with on-exchange plan counts', async () => {
    const body = await expectOk(await s.get('/v1/health/issuers?state=TX'), 'listIssuers');
    assert.equal(body.state, 'TX');
    assert.equal(body.year, 2025);
    assert.deepEqual(body.issuers, [
      { issuer_id: '33333', name: 'Downtown Health', plan_count: 1 },
      { issuer_id: '22222', name: 'Gulf Coast Care', plan_count: 3 },
      { issuer_id: '11111', name: 'Lone Star Health', plan_count: 5 },
    ]);
    assert.equal(body.total, 3);
    assert.equal(body._links.self.href, `${BASE}/v1/health/issuers?state=TX`);
    const ak = await expectOk(await s.get('/v1/health/issuers?state=AK&year=2025'), 'listIssuers');
    assert.deepEqual(ak.issuers, [{ issuer_id: '44444', name: 'Northern Lights Health', plan_count: 3 }]);
    assert.equal(ak._links.self.href, `${BASE}/v1/health/issuers?state=AK&year=2025`);
  });

  test('issuers: unknown state code is 400, a state without plan data 404', async () => {
    await expectProblem(await s.get('/v1/health/issuers?state=XX'), 400, '/v1/health/issuers', { fields: ['state'] });
    await expectProblem(await s.get('/v1/health/issuers?state=tx'), 400, '/v1/health/issuers', { fields: ['state'] });
    await expectProblem(await s.get('/v1/health/issuers'), 400, '/v1/health/issuers', {
      fields: ['state'],
      detail: 'Missing required parameter state.',
    });
    await expectProblem(await s.get('/v1/health/issuers?state=HI'), 404, '/v1/health/issuers', { detail: 'No plan data for HI in 2025.' });
  });
});

describe('/v1/openapi.json, /healthz, /readyz', () => {
  test('the OpenAPI 3.1 document is served without a key and lists every operation with its parameters', async () => {
    const before = Number((await s.get('/v1/health/years')).headers.get('ratelimit-remaining'));
    const res = await s.get('/v1/openapi.json', { tier: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const doc = await res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    assert.deepEqual(doc.servers, [{ url: BASE }]);
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
    assert.ok(doc.components.schemas.Problem);
    for (const op of OPERATIONS) {
      const item = doc.paths[op.path];
      assert.ok(item?.get, `${op.path} present`);
      const get = item.get;
      assert.equal(get.operationId, op.id);
      assert.ok(get.responses['200'].content['application/json'].schema, `${op.path} 200 schema`);
      assert.ok(get.responses['400'] && get.responses['401'] && get.responses['429'], `${op.path} error responses`);
      const params = get.parameters as Array<{ name: string; in: string; required: boolean; schema: unknown }>;
      for (const name of [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)) {
        const p = params.find((x) => x.name === name);
        assert.ok(p !== undefined && p.in === 'path' && p.required === true, `${op.path}: path parameter ${name}`);
      }
      const props = Object.keys((op.query.spec.schema.properties ?? {}) as object);
      const required = new Set((op.query.spec.schema.required ?? []) as string[]);
      for (const name of props) {
        const p = params.find((x) => x.name === name);
        assert.ok(p !== undefined, `${op.path}: parameter ${name}`);
        assert.ok(p.schema !== undefined);
        // A required parameter with an alias is optional in the document (either name may be sent), and
        // its description says one of them must be.
        const aliased = Object.values(op.query.spec.aliases ?? {}).includes(name);
        if (p.in === 'query') assert.equal(p.required, required.has(name) && !aliased, `${op.path}: ${name} required flag`);
        if (p.in === 'query' && aliased && required.has(name))
          assert.match((p as { description?: string }).description ?? '', new RegExp(`Required: give ${name} or its alias`));
      }
      if (op.tier !== 'free') assert.ok(get.responses['402'], `${op.path}: 402 documented`);
    }
    const expected = [
      'zip',
      'age',
      'year',
      'county_fips',
      'metal_level',
      'plan_type',
      'issuer',
      'hsa_eligible',
      'max_premium',
      'max_deductible',
      'sort_by',
      'sort_order',
      'cursor',
      'page',
      'per_page',
      'income',
      'household_size',
    ];
    const searchParams = (doc.paths['/v1/health/plans'].get.parameters as Array<{ name: string }>).map((p) => p.name);
    for (const n of expected) assert.ok(searchParams.includes(n), `search parameter ${n}`);
    for (const alias of ['page_size', 'sort', 'order']) assert.ok(searchParams.includes(alias), `alias ${alias} documented`);
    const after = Number((await s.get('/v1/health/years')).headers.get('ratelimit-remaining'));
    assert.equal(after, before - 1, 'the OpenAPI document does not count against the quota');
  });

  test('/healthz and /readyz answer without a key', async () => {
    const h = await s.get('/healthz', { tier: null });
    assert.equal(h.status, 200);
    assert.equal(h.headers.get('content-type'), 'application/json');
    assert.deepEqual(await h.json(), { status: 'ok' });
    const r = await s.get('/readyz', { tier: null });
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(body.status, 'ready');
    assert.deepEqual(body.years, [2025]);
    assert.equal(typeof body.build, 'string');
  });
});
