/**
 * @module The ICHRA affordability test through the API. The lowest-cost silver plan is
 * checked against the search endpoint, not the engine: the first plan of a premium-sorted silver search
 * for the same age and ZIP. The threshold and the smallest
 * affordable HRA are worked out here from the 2025 required contribution percentage (9.02 %, Rev. Proc.
 * 2024-35), and the verdict is checked on both sides of the boundary, a cent apart.
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
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-ichra-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const PATH = '/v1/health/ichra/affordability';
const PCT_2025 = 9.02;
const ichra = (zip: string, age: number, income: number, hra: number, extra = ''): string =>
  `${PATH}?zip=${zip}&age=${age}&household_income=${income}&hra_monthly=${hra}${extra}`;

/** The first plan of a premium-sorted silver search for this age (ties go by plan id), premium in cents. */
async function searchedLcsp(zip: string, age: number): Promise<{ id: string; cents: number }> {
  const body = await expectOk(await s.get(`/v1/health/plans?zip=${zip}&age=${age}&metal_level=silver&per_page=1`), 'searchPlans');
  const first = (body._embedded as { plans: Body[] }).plans[0];
  assert.ok(first !== undefined);
  return { id: String(first.id), cents: Math.round(Number(first.premium) * 100) };
}

describe('GET /v1/health/ichra/affordability', () => {
  for (const age of [21, 40, 64]) {
    test(`age ${age}: the lowest-cost silver plan is the first silver plan of a premium-sorted search`, async () => {
      const lcsp = await searchedLcsp(FIXTURE_ZIPS.harris, age);
      const body = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, age, 52_000, 300)), 'checkIchraAffordability');
      assert.equal(body.lcsp_plan_id, lcsp.id);
      assert.equal(Math.round(Number(body.lcsp_premium) * 100), lcsp.cents);
      assert.equal(body.age, age);
    });
  }

  test('threshold, cost, verdict and the smallest affordable HRA, worked out by hand; both sides of the boundary', async () => {
    const income = 52_000;
    const lcsp = await searchedLcsp(FIXTURE_ZIPS.harris, 40);
    // 52,000 × 9.02 % ÷ 12 = 390.8666… dollars a month.
    const thresholdCents = (income * PCT_2025) / 12;
    const minHra = Math.max(0, Math.ceil(lcsp.cents - thresholdCents)) / 100;
    const body = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, 40, income, 300)), 'checkIchraAffordability');
    assert.equal(body.required_contribution_percentage, PCT_2025);
    assert.equal(body.affordability_threshold, 390.87);
    assert.equal(body.hra_monthly, 300);
    assert.equal(body.employee_cost, Math.max(0, lcsp.cents - 30_000) / 100);
    assert.equal(body.affordable, lcsp.cents - 30_000 <= thresholdCents);
    assert.equal(body.min_affordable_hra, minHra);
    assert.ok(minHra > 0.01, 'the fixture’s premium needs some HRA at this income');
    assert.equal(body.premium_source, 'modeled');
    assert.equal(body.data_source, 'puf_data+modeled_premiums');
    assert.equal((body.notes as string[]).length, 2);

    const at = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, 40, income, minHra)), 'checkIchraAffordability');
    assert.equal(at.affordable, true);
    assert.equal(at.min_affordable_hra, minHra);
    const below = Math.round(minHra * 100 - 1) / 100;
    const under = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, 40, income, below)), 'checkIchraAffordability');
    assert.equal(under.affordable, false);
    assert.equal(under.employee_cost, Math.round(lcsp.cents - minHra * 100 + 1) / 100);
  });

  test('an HRA above the premium leaves the employee nothing to pay; a high income makes any HRA affordable', async () => {
    const big = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, 40, 52_000, 5_000)), 'checkIchraAffordability');
    assert.equal(big.employee_cost, 0);
    assert.equal(big.affordable, true);
    const rich = await expectOk(await s.get(ichra(FIXTURE_ZIPS.harris, 40, 1_000_000, 0)), 'checkIchraAffordability');
    assert.equal(rich.affordable, true);
    assert.equal(rich.min_affordable_hra, 0);
    assert.equal(rich.employee_cost, rich.lcsp_premium);
  });

  test('links: self echoes the request (income alias rewritten), lcsp_plan leads to the plan’s detail', async () => {
    const body = await expectOk(
      await s.get(`${PATH}?zip=${FIXTURE_ZIPS.harris}&age=40&income=52000&hra_monthly=300`),
      'checkIchraAffordability',
    );
    const links = body._links as Record<string, { href: string }>;
    assert.match(links.self!.href, /\/v1\/health\/ichra\/affordability\?zip=77002&age=40&household_income=52000&hra_monthly=300$/);
    const detail = await s.get(new URL(links.lcsp_plan!.href).pathname + new URL(links.lcsp_plan!.href).search);
    assert.equal(((await expectOk(detail, 'getPlanById')) as Body).id, body.lcsp_plan_id);
  });

  test('bad input: each field named with its reason; a state without plan data is a 404', async () => {
    await expectProblem(await s.get(`${PATH}?zip=${FIXTURE_ZIPS.harris}&age=40&household_income=52000`), 400, PATH, {
      fields: ['hra_monthly'],
    });
    await expectProblem(await s.get(ichra(FIXTURE_ZIPS.harris, 40, 52_000, -1)), 400, PATH, { fields: ['hra_monthly'] });
    await expectProblem(await s.get(ichra(FIXTURE_ZIPS.harris, 70, 52_000, 300)), 400, PATH, { fields: ['age'] });
    await expectProblem(await s.get(ichra(FIXTURE_ZIPS.harris, 40, 52_000, 300, '&ages=40')), 400, PATH, { fields: ['ages'] });
    await expectProblem(await s.get(ichra(FIXTURE_ZIPS.honolulu, 40, 52_000, 300)), 404, PATH, { detail: 'No plan data for HI in 2025.' });
  });
});
