/**
 * @module What the APTC estimate answers besides the credit: the CSR level of the
 * household's income, and its lowest-cost silver and bronze plans with their household premiums. Checked
 * against other endpoints, not the engine. For one member, the plans are the first of a premium-sorted
 * search by metal level. For a family, a plan's household premium is the sum of its searched single-age
 * premiums over the members the benchmark counts. The CSR bands are checked at their edges, worked out from
 * the 2024 poverty guideline ($15,060 for one person).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-aptc-lowest-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const aptc = (zip: string, income: number, size: number, ages: readonly number[]): Promise<Body> =>
  s
    .get(`/v1/health/plans/aptc-estimate?zip=${zip}&household_income=${income}&household_size=${size}&ages=${ages.join(',')}`)
    .then((r) => expectOk(r, 'calculateAptc'));

/** Every plan of a metal level a search lists at one age: id → premium in cents. */
async function searched(zip: string, age: number, metal: string): Promise<Map<string, number>> {
  const body = await expectOk(await s.get(`/v1/health/plans?zip=${zip}&age=${age}&metal_level=${metal}&per_page=100`), 'searchPlans');
  return new Map((body._embedded as { plans: Body[] }).plans.map((p) => [String(p.id), Math.round(Number(p.premium) * 100)]));
}

/** The cheapest of several searches' plans, ties by id. */
function cheapest(...lists: Map<string, number>[]): { id: string; cents: number } {
  let best: { id: string; cents: number } | null = null;
  for (const list of lists)
    for (const [id, cents] of list) if (best === null || cents < best.cents || (cents === best.cents && id < best.id)) best = { id, cents };
  assert.ok(best !== null);
  return best;
}

describe('APTC estimate: CSR level, lowest-cost silver and bronze plans', () => {
  test('one member: the lowest-cost silver and bronze plans are the first of a premium-sorted search', async () => {
    const body = await aptc(FIXTURE_ZIPS.harris, 30_000, 1, [40]);
    const silver = cheapest(await searched(FIXTURE_ZIPS.harris, 40, 'silver'));
    const bronze = cheapest(await searched(FIXTURE_ZIPS.harris, 40, 'bronze'), await searched(FIXTURE_ZIPS.harris, 40, 'expanded_bronze'));
    assert.equal(body.lcsp_plan_id, silver.id);
    assert.equal(Math.round(Number(body.lcsp_premium) * 100), silver.cents);
    assert.equal(body.lcbp_plan_id, bronze.id);
    assert.equal(Math.round(Number(body.lcbp_premium) * 100), bronze.cents);
    assert.ok(Number(body.lcsp_premium) <= Number(body.benchmark_premium));
  });

  test('a family: each plan’s household premium is the sum of its single-age premiums over the counted members', async () => {
    const ages = [40, 38, 10];
    const body = await aptc(FIXTURE_ZIPS.harris, 60_000, 3, ages);
    const counted = (body.members as Body[]).filter((m) => m.counted_in_benchmark === true).map((m) => Number(m.age));
    for (const [idKey, premiumKey, metals] of [
      ['lcsp_plan_id', 'lcsp_premium', ['silver']],
      ['lcbp_plan_id', 'lcbp_premium', ['bronze', 'expanded_bronze']],
    ] as const) {
      const id = String(body[idKey]);
      let sum = 0;
      for (const age of counted) {
        let cents: number | undefined;
        for (const metal of metals) cents ??= (await searched(FIXTURE_ZIPS.harris, age, metal)).get(id);
        assert.ok(cents !== undefined, `${id} sold at age ${age}`);
        sum += cents;
      }
      assert.equal(Math.round(Number(body[premiumKey]) * 100), sum, idKey);
    }
    assert.ok(Number(body.lcsp_premium) <= Number(body.benchmark_premium));
  });

  test('the CSR level follows the income bands, their upper ends included', async () => {
    // One person, 2024 guideline $15,060: 150 % = 22,590, 200 % = 30,120, 250 % = 37,650.
    const cases: Array<[number, number | null]> = [
      [13_000, null], // below 100 %: no credit, no CSR
      [15_060, 94],
      [22_590, 94],
      [22_591, 87],
      [30_120, 87],
      [30_121, 73],
      [37_650, 73],
      [37_651, null],
    ];
    for (const [income, level] of cases) assert.equal((await aptc(FIXTURE_ZIPS.harris, income, 1, [40])).csr_level, level, String(income));
  });

  test('a state without plan data: no lowest-cost plans, the CSR level still said', async () => {
    const body = await aptc(FIXTURE_ZIPS.honolulu, 20_000, 1, [40]);
    assert.equal(body.benchmark_source, 'benchmark_only');
    assert.deepEqual([body.lcsp_plan_id, body.lcsp_premium, body.lcbp_plan_id, body.lcbp_premium], [null, null, null, null]);
    // HI's own guideline ($17,310): 20,000 is 115.5 %.
    assert.equal(body.csr_level, 94);
  });
});
