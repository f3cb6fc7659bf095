/**
 * @module The choices the public API leaves open (docs/compatibility.md#endpoints), made the same way everywhere, through a
 * real server: `multiple_areas` means several rating areas, "plan not offered here" is one 404, the
 * crosswalk tells a missing data file from a client mistake, a ZIP of a state without plan data says so,
 * and a safe incoming X-Request-Id is kept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { BASE, expectOk, expectProblem, UUID_V4 } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-consistency-'));
  s = await startFixtureServer({ buildsRoot: await buildFixture(dir), stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('multiple_areas: true only when the locations differ in rating area', () => {
  test('a ZIP in two counties of one rating area: false, both locations listed', async () => {
    const zip = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.splitOneArea}`), 'lookupZip');
    assert.equal(zip.multiple_areas, false);
    assert.deepEqual(
      zip.locations.map((l: { county_fips: string; rating_area_id: string; primary: boolean }) => [
        l.county_fips,
        l.rating_area_id,
        l.primary,
      ]),
      [
        ['48201', 'Rating Area 10', true],
        ['48291', 'Rating Area 10', false],
      ],
    );
    const search = await expectOk(await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.splitOneArea}&age=40`), 'searchPlans');
    assert.equal(search.multiple_areas, false);
    const liberty = await expectOk(
      await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.splitOneArea}&age=40&county_fips=48291`),
      'searchPlans',
    );
    assert.equal(liberty.county, 'Liberty County');
    assert.equal(liberty.multiple_areas, false);
    const oop = await expectOk(
      await s.get(`/v1/health/plans/22222TX0020001-01/oop-estimate?zip=${FIXTURE_ZIPS.splitOneArea}&age=40&scenario=low`),
      'estimateOop',
    );
    assert.equal(oop.multiple_areas, false);
    const cmp = await expectOk(
      await s.get(`/v1/health/plans/compare?ids=22222TX0020001-01,22222TX0020002-01&zip=${FIXTURE_ZIPS.splitOneArea}&age=40`),
      'comparePlans',
    );
    assert.equal(cmp.multiple_areas, false);
  });

  test('a ZIP in two rating areas stays true everywhere', async () => {
    const zip = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.split}`), 'lookupZip');
    assert.equal(zip.multiple_areas, true);
    const search = await expectOk(await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.split}&age=40`), 'searchPlans');
    assert.equal(search.multiple_areas, true);
  });
});

describe('a plan not offered at the location is 404 on compare, OOP and detail', () => {
  const detail = (plan: string, zip: string) => `Plan ${plan} is not offered in ZIP ${zip}.`;

  test('compare: 404 not-found naming plan and ZIP', async () => {
    const path = '/v1/health/plans/compare';
    // Montgomery County (77301) is served by the whole-state issuer 22222 only.
    await expectProblem(await s.get(`${path}?ids=22222TX0020001-01,11111TX0010001-01&zip=${FIXTURE_ZIPS.montgomery}&age=30`), 404, path, {
      detail: detail('11111TX0010001-01', FIXTURE_ZIPS.montgomery),
    });
    // A plan of another state.
    await expectProblem(await s.get(`${path}?ids=22222TX0020001-01,44444AK0040001-01&zip=${FIXTURE_ZIPS.harris}&age=30`), 404, path, {
      detail: detail('44444AK0040001-01', FIXTURE_ZIPS.harris),
    });
  });

  test('OOP answers the same status and detail for the same plan and ZIP', async () => {
    const path = '/v1/health/plans/11111TX0010001-01/oop-estimate';
    await expectProblem(await s.get(`${path}?zip=${FIXTURE_ZIPS.montgomery}&age=30&scenario=low`), 404, path, {
      detail: detail('11111TX0010001-01', FIXTURE_ZIPS.montgomery),
    });
    const ak = '/v1/health/plans/44444AK0040001-01/oop-estimate';
    await expectProblem(await s.get(`${ak}?zip=${FIXTURE_ZIPS.harris}&age=30&scenario=low`), 404, ak, {
      detail: detail('44444AK0040001-01', FIXTURE_ZIPS.harris),
    });
  });

  test('a partial-county plan outside its ZIPs: compare and OOP both 404, although its rating area is priced', async () => {
    // 33333TX0030001 is sold in Harris County only in 77002 and 77003; 77477 with county_fips 48201 is
    // Harris County, rating area 10, outside those ZIPs.
    const where = `zip=${FIXTURE_ZIPS.split}&county_fips=48201&age=30`;
    const msg = detail('33333TX0030001-01', FIXTURE_ZIPS.split);
    const cmp = '/v1/health/plans/compare';
    await expectProblem(await s.get(`${cmp}?ids=22222TX0020001-01,33333TX0030001-01&${where}`), 404, cmp, { detail: msg });
    const oop = '/v1/health/plans/33333TX0030001-01/oop-estimate';
    await expectProblem(await s.get(`${oop}?${where}&scenario=low`), 404, oop, { detail: msg });
    // Inside its ZIPs both answer.
    await expectOk(await s.get(`${oop}?zip=${FIXTURE_ZIPS.harris}&age=30&scenario=low`), 'estimateOop');
  });

  test('detail is priced only with a location and an age: a zip alone is a 400 naming age, never a 404', async () => {
    const path = '/v1/health/plans/11111TX0010001-01';
    const body = await expectProblem(await s.get(`${path}?zip=${FIXTURE_ZIPS.montgomery}`), 400, path, { fields: ['age'] });
    assert.equal(body.errors[0].message, 'Required with zip (or give ages)');
  });
});

describe('GET /v1/health/zips/{zip} for a state without plan data', () => {
  test('says plans_available false with a note, and no data_source', async () => {
    const body = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.honolulu}`), 'lookupZip');
    assert.equal(body.plans_available, false);
    assert.equal(body.data_source, undefined, 'no data_source for data that is not there');
    assert.match(body.note, /No plan data for HI in 2025/);
    assert.equal(body.locations[0].state, 'HI');
    // No plan file describes HI: the answer cites the benchmark table, not the plan files' date.
    assert.match(body.data_freshness, /^PY2025 benchmark only, no plan data for HI: SLCSP benchmarks /);
    assert.deepEqual(body.plan_data_years, []);
  });

  test('a state with plan data: plans_available true, data_source present, no note', async () => {
    const body = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.harris}`), 'lookupZip');
    assert.equal(body.plans_available, true);
    assert.match(body.data_source, /^puf_data/);
    assert.equal(body.note, undefined);
    assert.ok(body._links.search !== undefined, 'a search link where a search answers');
  });

  test('one rule for every endpoint, and every link it gives answers', async () => {
    const zip = FIXTURE_ZIPS.honolulu;
    const lookup = await expectOk(await s.get(`/v1/health/zips/${zip}`), 'lookupZip');
    assert.equal(lookup._links.search, undefined, 'no link to a search that answers 404');
    assert.match(
      lookup.note,
      /search, plan detail, compare and out-of-pocket answer 404 for this ZIP; the APTC estimate answers from published benchmark data only/,
    );
    const aptcPath = `/v1/health/plans/aptc-estimate?zip=${zip}&household_income=40000&household_size=1&ages=40`;
    const aptc = await expectOk(await s.get(aptcPath), 'calculateAptc');
    assert.equal(aptc.benchmark_source, 'benchmark_only');
    assert.equal(aptc._links.search, undefined, 'no link to a search that answers 404');
    assert.match(
      aptc.benchmark_plan_description,
      /^Approximate second-lowest-cost silver premium .* from published benchmark data: no plan data is loaded for HI$/,
    );
    assert.ok(
      aptc.notes.some((n: string) => /approximation/.test(n)),
      'the estimate says it is one',
    );
    // Every link a response gives answers.
    for (const body of [lookup, aptc]) {
      for (const link of Object.values(body._links) as Array<{ href: string; templated?: boolean }>) {
        const href = link.templated === true ? link.href.replace(/\{[^}]*\}/g, '') : link.href;
        const r = await s.get(href.replace(BASE, ''));
        await r.arrayBuffer();
        assert.equal(r.status, 200, href);
      }
    }
    // What the note says each endpoint answers, each answers: the one 404, whether the request names the
    // state by its ZIP or by a plan ID's state letters.
    const none = { detail: 'No plan data for HI in 2025.' };
    const hiPlan = '12345HI0010001-01';
    const search = `/v1/health/plans?zip=${zip}&age=40`;
    await expectProblem(await s.get(search), 404, search, none);
    const detail = `/v1/health/plans/${hiPlan}`;
    await expectProblem(await s.get(detail), 404, detail, none);
    const cmp = '/v1/health/plans/compare';
    await expectProblem(await s.get(`${cmp}?ids=11111TX0010001-01,22222TX0020001-01&zip=${zip}&age=40`), 404, cmp, none);
    await expectProblem(await s.get(`${cmp}?ids=11111TX0010001-01,${hiPlan}&zip=${FIXTURE_ZIPS.harris}&age=40`), 404, cmp, none);
    for (const [plan, at] of [
      ['11111TX0010001-01', zip],
      [hiPlan, FIXTURE_ZIPS.harris],
    ]) {
      const oop = `/v1/health/plans/${plan}/oop-estimate`;
      await expectProblem(await s.get(`${oop}?zip=${at}&age=40&scenario=low`), 404, oop, none);
    }
  });
});

describe('X-Request-Id', () => {
  test('a safe incoming token is echoed, on 200 and on problems', async () => {
    for (const id of ['req-42', 'a.b:c_d-E9', 'x'.repeat(128)]) {
      const ok = await s.get('/v1/health/years', { headers: { 'x-request-id': id } });
      await ok.arrayBuffer();
      assert.equal(ok.headers.get('x-request-id'), id);
      const bad = await s.get('/v1/health/zips/123', { headers: { 'x-request-id': id } });
      await bad.arrayBuffer();
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get('x-request-id'), id);
    }
  });

  test('an unsafe or too long one is replaced by a fresh UUID', async () => {
    for (const id of ['x'.repeat(129), 'has space', 'semi;colon', 'é', '<script>', '']) {
      const res = await s.get('/v1/health/years', { headers: { 'x-request-id': id } });
      await res.arrayBuffer();
      const got = res.headers.get('x-request-id');
      assert.match(got ?? '', UUID_V4, `replacing ${JSON.stringify(id)}`);
    }
    const preflight = await fetch(`${s.url}/v1/health/years`, {
      method: 'OPTIONS',
      headers: { 'x-request-id': 'pre-1', origin: 'http://x.test', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.headers.get('x-request-id'), 'pre-1');
    const none = await s.get('/v1/health/years');
    await none.arrayBuffer();
    assert.match(none.headers.get('x-request-id') ?? '', UUID_V4);
  });
});
