/**
 * @module Stand-alone dental plans through the API, on real builds: PY2024 from the CT, RI
 * and VT state-exchange files (real dental rates) and PY2025 from the federal PUFs (no Rate PUF, so
 * every dental premium is null and labelled, never modeled). The premiums below were read by hand from
 * shared/data/cms/sbe-py2024 (line numbers of the CSV files):
 *   CTRates05102024.csv:15583  86545CT1400003, Rating Area 2, age 40       → 38.76
 *   CTRates05102024.csv:15557  86545CT1400003, Rating Area 2, age 0-14     → 28.87
 *   RIRates05102024.csv:2425   15287RI0860001, Rating Area 1, age 40       → 14.92
 *   RIRates05102024.csv:2399   15287RI0860001, Rating Area 1, age 0-14     → 21.95
 *   VTRates05102024.csv:29     67380VT0070001, Rating Area 1, no age (community rated) → 59.00
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildRealYear } from '../helpers/build-real-year.ts';
import { type Body, expectOk, expectProblem, pathOf } from '../helpers/http-assert.ts';
import { type FixtureServer, startFixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-dental-'));
  await buildRealYear(dir, 2024);
  await buildRealYear(dir, 2025);
  s = await startFixtureServer({ buildsRoot: join(dir, 'builds'), stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SEARCH = '/v1/health/dental/plans';
const NOTE_TX_2025 = 'No dental rates are loaded for TX 2025: premiums are not modeled for dental plans';

async function search(query: string): Promise<Body> {
  return expectOk(await s.get(`${SEARCH}?${query}`), 'searchDentalPlans', query);
}

function planOf(body: Body, id: string): Body {
  const plan = (body._embedded.dental_plans as Body[]).find((p) => p.id === id);
  assert.ok(plan !== undefined, `${id} not listed: ${(body._embedded.dental_plans as Body[]).map((p) => p.id).join(', ')}`);
  return plan;
}

/** Premium ascending, then plan id; plans without a premium last. */
function assertPremiumOrder(plans: readonly Body[]): void {
  for (let i = 1; i < plans.length; i++) {
    const [a, b] = [plans[i - 1], plans[i]];
    const key = (p: Body): [number, string] => [p.premium === null ? Number.POSITIVE_INFINITY : p.premium, p.id];
    const [ka, kb] = [key(a), key(b)];
    assert.ok(ka[0] < kb[0] || (ka[0] === kb[0] && ka[1] < kb[1]), `${a.id} before ${b.id}`);
  }
}

describe('GET /v1/health/dental/plans on the 2024 state-exchange files: real premiums', () => {
  test('Connecticut (Hartford, Rating Area 2): the Rate PUF row of the plan, age and area', async () => {
    const body = await search('zip=06103&age=40&year=2024');
    assert.equal(body.state, 'CT');
    assert.equal(body.rating_area, 'Rating Area 2');
    assert.equal(body.premiums_loaded, true);
    assert.equal(body.premium_note, null);
    assert.equal(body.total, 6);
    const plan = planOf(body, '86545CT1400003-01');
    assert.equal(plan.premium, 38.76);
    assert.equal(plan.premium_source, 'rate_puf');
    assert.equal(plan.premium_note, null);
    assert.equal(plan.name, 'Anthem Dental Family');
    assert.equal(plan.metal_level, 'low');
    assert.equal(plan.enrollees, 'adult_and_child');
    assert.equal(plan.ehb_pediatric_dental_apportionment, 1);
    assert.equal(plan.max_out_of_pocket.individual, 350);
    assert.ok((body._embedded.dental_plans as Body[]).every((p) => p.premium_source === 'rate_puf' && p.premium > 0));
    assertPremiumOrder(body._embedded.dental_plans);
    assert.equal(body.data_source, 'puf_data');
    assert.equal(body.data_freshness, 'PY2024 as of 2024-02-12; dental premiums from the Rate PUF');
    const child = await search('zip=06103&age=10&year=2024');
    assert.equal(planOf(child, '86545CT1400003-01').premium, 28.87);
  });

  test('Rhode Island (Providence): the Rate PUF rows at 40 and at the child band', async () => {
    const body = await search('zip=02903&age=40&year=2024');
    assert.equal(body.state, 'RI');
    assert.equal(body.total, 7);
    assert.equal(planOf(body, '15287RI0860001-01').premium, 14.92);
    assertPremiumOrder(body._embedded.dental_plans);
    assert.equal(planOf(await search('zip=02903&age=3&year=2024'), '15287RI0860001-01').premium, 21.95);
  });

  test('Vermont (Burlington): community rated, one rate for every age', async () => {
    for (const age of [5, 40, 64]) {
      const body = await search(`zip=05401&age=${age}&year=2024`);
      assert.equal(body.total, 1);
      const plan = planOf(body, '67380VT0070001-01');
      assert.equal(plan.premium, 59);
      assert.equal(plan.premium_source, 'rate_puf');
    }
  });
});

describe('GET /v1/health/dental/plans on the 2025 federal PUFs: no rates, premiums null and labelled', () => {
  test('Houston: dental plans listed, every premium null with the label, by name then id', async () => {
    const body = await search('zip=77002&age=40&per_page=100');
    assert.equal(body.state, 'TX');
    assert.equal(body.plan_year, 2025);
    assert.equal(body.premiums_loaded, false);
    assert.equal(body.premium_note, NOTE_TX_2025);
    assert.equal(body.data_source, 'puf_data', 'dental premiums are not modeled: no +modeled_premiums');
    assert.equal(body.data_freshness, 'PY2025 as of 2024-12-05; dental premiums not loaded (never modeled)');
    const plans = body._embedded.dental_plans as Body[];
    assert.ok(body.total > 10, `only ${body.total} dental plans`);
    assert.equal(plans.length, body.total);
    for (const p of plans) {
      assert.equal(p.premium, null);
      assert.equal(p.premium_source, null);
      assert.equal(p.premium_note, NOTE_TX_2025);
      assert.equal(p.state, 'TX');
      assert.ok(['high', 'low'].includes(p.metal_level));
    }
    for (let i = 1; i < plans.length; i++) {
      const [a, b] = [plans[i - 1], plans[i]];
      const [na, nb] = [a.name.toLowerCase(), b.name.toLowerCase()];
      assert.ok(na < nb || (na === nb && a.id < b.id), `${a.name} ${a.id} before ${b.name} ${b.id}`);
    }
  });

  test('pages: offset pages of the same order, with first/prev/next/last links', async () => {
    const all = (await search('zip=77002&age=40&per_page=100'))._embedded.dental_plans as Body[];
    const page2 = await search('zip=77002&age=40&per_page=3&page=2');
    assert.deepEqual(
      (page2._embedded.dental_plans as Body[]).map((p) => p.id),
      all.slice(3, 6).map((p) => p.id),
    );
    assert.equal(pathOf(page2._links.next.href), `${SEARCH}?zip=77002&age=40&per_page=3&page=3`);
    assert.equal(pathOf(page2._links.prev.href), `${SEARCH}?zip=77002&age=40&per_page=3&page=1`);
    assert.equal(pathOf(page2._links.last.href), `${SEARCH}?zip=77002&age=40&per_page=3&page=${Math.ceil(all.length / 3)}`);
    const beyond = await search(`zip=77002&age=40&per_page=3&page=${all.length}`);
    assert.deepEqual(beyond._embedded.dental_plans, []);
    assert.equal(beyond._links.next, undefined);
  });

  test('medical search at the same ZIP lists no dental plan', async () => {
    const body = await expectOk(await s.get('/v1/health/plans?zip=77002&age=40&per_page=100'), 'searchPlans');
    assert.ok((body._embedded.plans as Body[]).every((p) => !['high', 'low'].includes(p.metal_level)));
  });
});

describe('GET /v1/health/dental/plans/{plan_id}', () => {
  test('the record of a 2024 plan, rates loaded; a 14-character id resolves to its -01 variant', async () => {
    const body = await expectOk(await s.get('/v1/health/dental/plans/86545CT1400003-01?year=2024'), 'getDentalPlanById');
    assert.equal(body.id, '86545CT1400003-01');
    assert.equal(body.standard_component_id, '86545CT1400003');
    // The state's Plans file leaves the issuer name blank: null and the reason, never an empty name.
    assert.equal(body.issuer, null);
    assert.match(String(body.issuer_note), /does not publish the issuer name \(HIOS issuer ID 86545\)/);
    assert.equal(body.on_exchange, true);
    assert.equal(body.premiums_loaded, true);
    assert.equal(body.premium_note, null);
    assert.equal(body.service_area_id, 'CTS002');
    assert.equal(body.plan_year, 2024);
    assert.equal(pathOf(body._links.self.href), '/v1/health/dental/plans/86545CT1400003-01?year=2024');
    const bare = await expectOk(await s.get('/v1/health/dental/plans/86545CT1400003?year=2024'), 'getDentalPlanById');
    assert.equal(bare.id, '86545CT1400003-01');
  });

  test('a 2025 plan listed by search: premiums not loaded, labelled', async () => {
    const first = ((await search('zip=77002&age=40'))._embedded.dental_plans as Body[])[0];
    const body = await expectOk(await s.get(pathOf(first._links.self.href)), 'getDentalPlanById');
    assert.equal(body.id, first.id);
    assert.equal(body.name, first.name);
    assert.equal(body.premiums_loaded, false);
    assert.equal(body.premium_note, NOTE_TX_2025);
  });

  test('unknown plans are 404; a medical plan is not a dental plan; a state without plan data says so', async () => {
    await expectProblem(await s.get('/v1/health/dental/plans/00000TX0000000-01'), 404, '/v1/health/dental/plans/00000TX0000000-01', {
      detail: 'Dental plan 00000TX0000000-01 not found.',
    });
    const medical = (
      (await expectOk(await s.get('/v1/health/plans?zip=77002&age=40&per_page=1'), 'searchPlans'))._embedded.plans as Body[]
    )[0];
    await expectProblem(await s.get(`/v1/health/dental/plans/${medical.id}`), 404, `/v1/health/dental/plans/${medical.id}`);
    await expectProblem(await s.get('/v1/health/dental/plans/86545CT1400003-01'), 404, '/v1/health/dental/plans/86545CT1400003-01', {
      // The fixture's 2024 build has CT plans: the answer names that year.
      detail: 'No plan data for CT in 2025; plan data for CT is loaded for 2024 (pass year=2024).',
    });
  });
});

describe('bad input: RFC 9457 problems naming the field', () => {
  const cases: Array<[string, number, string[] | undefined]> = [
    ['zip=7700&age=40', 400, ['zip']],
    ['zip=77002', 400, ['age']],
    ['zip=77002&age=66', 400, ['age']],
    ['zip=77002&age=40&per_page=0', 400, ['per_page']],
    ['zip=77002&age=40&page=0', 400, ['page']],
    ['zip=77002&age=40&county_fips=06001', 400, ['county_fips']],
    ['zip=77002&age=40&year=2019', 400, ['year']],
    ['zip=77002&age=40&metal_level=high', 400, ['metal_level']],
    ['zip=00000&age=40', 404, undefined],
  ];
  for (const [query, status, fields] of cases) {
    test(`${query} → ${status}${fields === undefined ? '' : ` on ${fields.join(', ')}`}`, async () => {
      await expectProblem(await s.get(`${SEARCH}?${query}`), status, SEARCH, fields === undefined ? {} : { fields });
    });
  }
});
