/**
 * @module `GET /v1/health/plans/crosswalk` through a real server (docs/compatibility.md#plan-crosswalk): refused while no
 * crosswalk is loaded, then against a build with a PY2025 → PY2026 Plan ID Crosswalk PUF in the
 * official 24-column format.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildCrosswalkFixture } from '../helpers/crosswalk-fixture.ts';
import { BASE, expectOk, expectProblem, messageOf, UPGRADE } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

const PATH = '/v1/health/plans/crosswalk';
const q = (planId: string, year: number | string, state: string) => `${PATH}?plan_id=${planId}&year=${year}&state=${state}`;

describe('without crosswalk data', () => {
  let dir: string;
  let s: FixtureServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-http-nocw-'));
    s = await startFixtureServer({ buildsRoot: await buildFixture(dir), stateDir: join(dir, 'state') });
  });
  after(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('year 2025, which the spec allows, is a 404 saying the crosswalk data is not loaded', async () => {
    const path = q('11111TX0010001', 2025, 'TX');
    await expectProblem(await s.get(path), 404, path, { detail: 'Crosswalk data for 2025 to 2026 is not loaded on this server.' });
  });

  test('a year the API does not know is still a 400 on year', async () => {
    for (const year of [2024, 2030]) {
      const path = q('11111TX0010001', year, 'TX');
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['year'] });
      assert.match(messageOf(body, 'year'), new RegExp(`Year ${year} has no crosswalk data; no crosswalk is loaded`));
    }
  });

  test('client mistakes are still 400s before the missing data, a bad state on state only', async () => {
    const sbm = q('11111TX0010001', 2025, 'CA');
    const body = await expectProblem(await s.get(sbm), 400, sbm, { fields: ['state'] });
    assert.equal(messageOf(body, 'state'), 'State CA has no crosswalk data; only HealthCare.gov states are covered');
    const unknown = q('11111TX0010001', 2025, 'ZZ');
    const z = await expectProblem(await s.get(unknown), 400, unknown, { fields: ['state'] });
    assert.equal(messageOf(z, 'state'), 'Unknown state code ZZ');
    const other = q('11111TX0010001', 2025, 'AK');
    await expectProblem(await s.get(other), 400, other, { fields: ['plan_id'] });
  });
});

describe('with a PY2025 → PY2026 crosswalk', () => {
  let dir: string;
  let s: FixtureServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-http-cw-'));
    s = await startFixtureServer({ buildsRoot: await buildCrosswalkFixture(dir), stateDir: join(dir, 'state') });
  });
  after(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('reason 0: renewed into the same plan id', async () => {
    const path = q('11111TX0010001', 2025, 'TX');
    const body = await expectOk(await s.get(path), 'getCrosswalk');
    assert.deepEqual(body._links, { self: { href: `${BASE}${path}`, type: 'application/json' } });
    assert.deepEqual(body.source_plan, {
      plan_id: '11111TX0010001',
      year: 2025,
      state: 'TX',
      name: 'Lone Star Silver 4500',
      issuer_id: '11111',
      issuer_name: 'Lone Star Health',
    });
    assert.equal(body.target_plan.plan_id, '11111TX0010001');
    assert.equal(body.target_plan.year, 2026);
    assert.equal(body.target_plan.state, 'TX');
    assert.equal(body.target_plan.issuer_id, '11111');
    // PY2026 plan data is not loaded: the target's names are unknown.
    assert.equal(body.target_plan.name, null);
    assert.equal(body.crosswalk_reason, 'plan_default_crosswalk');
    assert.equal(body.reason_code, 0);
    assert.equal(typeof body.reason_description, 'string');
    assert.equal(body.data_source, 'puf_data');
    assert.match(body.data_freshness, /^PY2025-PY2026 as of \d{4}-\d{2}-\d{2}$/);
  });

  test('reason 2: discontinued and crosswalked to another plan', async () => {
    const body = await expectOk(await s.get(q('11111TX0010002', 2025, 'TX')), 'getCrosswalk');
    assert.equal(body.source_plan.name, 'Lone Star Silver 3000');
    assert.equal(body.target_plan.plan_id, '11111TX0010001');
    assert.equal(body.crosswalk_reason, 'plan_discontinued_crosswalked');
    assert.equal(body.reason_code, 2);
    assert.equal(body.reason_description, 'Discontinued; enrollees are crosswalked to a replacement plan');
  });

  test('reason 3 with the sentinel target: target_plan is null', async () => {
    const body = await expectOk(await s.get(q('11111TX0010003', 2025, 'TX')), 'getCrosswalk');
    assert.equal(body.target_plan, null);
    assert.equal(body.crosswalk_reason, 'plan_discontinued_no_replacement');
    assert.equal(body.reason_code, 3);
    assert.equal(body.source_plan.issuer_id, '11111');
  });

  test('targets differing by county: the one covering the most counties wins', async () => {
    const body = await expectOk(await s.get(q('22222TX0020001', 2025, 'TX')), 'getCrosswalk');
    assert.equal(body.target_plan.plan_id, '22222TX0020009', 'two counties beat one, although its id is higher');
    assert.equal(body.crosswalk_reason, 'plan_crosswalked_county_level');
    assert.equal(body.reason_code, 6);
  });

  test('a tie on counties goes to the lowest target id', async () => {
    const body = await expectOk(await s.get(q('22222TX0020002', 2025, 'TX')), 'getCrosswalk');
    assert.equal(body.target_plan.plan_id, '22222TX0020007');
    assert.equal(body.crosswalk_reason, 'plan_crosswalked_multi_factor');
    assert.equal(body.reason_code, 10);
  });

  test('another covered state answers too', async () => {
    const body = await expectOk(await s.get(q('44444AK0040001', 2025, 'AK')), 'getCrosswalk');
    assert.equal(body.source_plan.state, 'AK');
    assert.equal(body.target_plan.plan_id, '44444AK0040001');
  });

  test('a state without crosswalk data is 400 on state, whatever the plan ID says', async () => {
    for (const [plan, state] of [
      ['12345HI0010001', 'HI'],
      ['12345CA0010001', 'CA'],
      ['11111TX0010001', 'CA'],
      ['11111TX0010001', 'HI'],
    ]) {
      const path = q(plan!, 2025, state!);
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['state'] });
      assert.equal(messageOf(body, 'state'), `State ${state} has no crosswalk data; only HealthCare.gov states are covered`);
    }
  });

  test('a variant id (with -01) is 400 on plan_id', async () => {
    const path = q('11111TX0010001-01', 2025, 'TX');
    await expectProblem(await s.get(path), 400, path, { fields: ['plan_id'] });
    const lower = q('11111tx0010001', 2025, 'TX');
    await expectProblem(await s.get(lower), 400, lower, { fields: ['plan_id'] });
  });

  test('an unknown state code is 400 on state, not on plan_id', async () => {
    const path = q('11111TX0010001', 2025, 'ZZ');
    const body = await expectProblem(await s.get(path), 400, path, { fields: ['state'] });
    assert.equal(messageOf(body, 'state'), 'Unknown state code ZZ');
  });

  test('a plan whose state letters differ from state is 400 on plan_id', async () => {
    const path = q('11111TX0010001', 2025, 'AK');
    const body = await expectProblem(await s.get(path), 400, path, { fields: ['plan_id'] });
    assert.match(messageOf(body, 'plan_id'), /11111TX0010001/);
  });

  test('a plan not in the crosswalk is 404', async () => {
    const path = q('33333TX0030001', 2025, 'TX');
    await expectProblem(await s.get(path), 404, path, { detail: 'No crosswalk entry for plan 33333TX0030001 in 2025.' });
  });

  test('a year other than the crosswalk source year is 400 on year', async () => {
    for (const year of [2024, 2026]) {
      const path = q('11111TX0010001', year, 'TX');
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['year'] });
      assert.match(messageOf(body, 'year'), /Available years: 2025/);
    }
    const old = q('11111TX0010001', 2013, 'TX');
    await expectProblem(await s.get(old), 400, old, { fields: ['year'] });
  });

  test('every parameter is required', async () => {
    await expectProblem(await s.get(PATH), 400, PATH, { fields: ['plan_id', 'year', 'state'] });
    const bad = `${PATH}?plan_id=x&year=y&state=Texas`;
    const body = await expectProblem(await s.get(bad), 400, bad, { detail: 'Invalid input.' });
    assert.deepEqual(new Set(body.errors.map((e: { field: string }) => e.field)), new Set(['plan_id', 'year', 'state']));
  });

  test('Free is refused with 402; Pro and Enterprise are served', async () => {
    const path = q('11111TX0010001', 2025, 'TX');
    const body = await expectProblem(await s.get(path, { tier: 'free' }), 402, path, {
      detail: 'Plan crosswalk requires a Pro subscription.',
    });
    assert.equal(body.required_tier, 'pro');
    assert.equal(body.upgrade, UPGRADE);
    await expectOk(await s.get(path, { tier: 'pro' }), 'getCrosswalk');
    await expectOk(await s.get(path, { tier: 'enterprise' }), 'getCrosswalk');
  });

  test('the crosswalk build still serves the plan year as before', async () => {
    const years = await expectOk(await s.get('/v1/health/years'), 'getAvailableYears');
    assert.deepEqual(years.available_years, [2025]);
    await expectOk(await s.get('/v1/health/plans?zip=77002&age=40'), 'searchPlans');
  });
});
