/**
 * @module APTC through the API, checked against values worked out here by hand from the fixture's
 * premiums and the 2025 rules (docs/compatibility.md#aptc-estimate, docs/compatibility.md#plan-search):
 * 2024 poverty guidelines (AK and HI tables), the enhanced applicable-percentage table without the
 * 400 % cliff, the three-child rule, the SLCSP benchmark, and the credit and CSR variants in search.
 */
import assert from 'node:assert/strict';
import { fixtureCreditCents } from '../helpers/fixture-credit.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURE_PLANS, FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-aptc-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---- 2025 rules, written out independently of src/engine ----------------------------------------

/** 2024 HHS poverty guidelines (used for tax year 2025). */
const FPL_2024: Record<string, [number, number]> = { contiguous: [15_060, 5_380], AK: [18_810, 6_730], HI: [17_310, 6_190] };
/** Enhanced applicable-percentage table for 2025: [from %, to %, initial, final]; no 400 % cliff. */
const TABLE_2025: Array<[number, number | null, number, number]> = [
  [0, 150, 0, 0],
  [150, 200, 0, 2],
  [200, 250, 2, 4],
  [250, 300, 4, 6],
  [300, 400, 6, 8.5],
  [400, null, 8.5, 8.5],
];

function fpl(state: string, size: number): number {
  const [first, extra] = FPL_2024[state] ?? FPL_2024.contiguous!;
  return first + (size - 1) * extra;
}

const round2 = (x: number): number => Math.round(Number((x * 100).toPrecision(12))) / 100;

interface Expected {
  fplAmount: number;
  fplPercentage: number;
  eligible: boolean;
  applicable: number | null;
  yearly: number;
  monthly: number;
}

function expectedContribution(state: string, income: number, size: number): Expected {
  const amount = fpl(state, size);
  const pct = (income * 100) / amount;
  const truncated = Math.floor(pct);
  if (pct < 100) return { fplAmount: amount, fplPercentage: round2(pct), eligible: false, applicable: null, yearly: 0, monthly: 0 };
  const [from, to, initial, final] = TABLE_2025.find(([f, t]) => truncated >= f && (t === null || truncated < t))!;
  const applicable = to === null ? initial : round2(initial + ((truncated - from) / (to - from)) * (final - initial));
  const yearly = Math.round((income * applicable) / 100);
  return { fplAmount: amount, fplPercentage: round2(pct), eligible: true, applicable, yearly, monthly: Math.round(yearly / 12) };
}

/** Service areas selling in each fixture ZIP (from the fixture's Service Area PUF). */
const SERVICE_AREAS: Record<string, { area: number; state: string; areas: string[] }> = {
  [FIXTURE_ZIPS.harris]: { area: 10, state: 'TX', areas: ['TXS001', 'TXS002', 'TXS003'] },
  [FIXTURE_ZIPS.montgomery]: { area: 27, state: 'TX', areas: ['TXS002'] },
  [FIXTURE_ZIPS.anchorage]: { area: 1, state: 'AK', areas: ['AKS001'] },
};

/** Three-child rule: adults (21+) always count; of the younger members only the three oldest. */
function countedFlags(ages: readonly number[]): boolean[] {
  const flags = ages.map((a) => a >= 21);
  ages
    .map((age, i) => ({ age, i }))
    .filter((m) => m.age < 21)
    .sort((a, b) => b.age - a.age)
    .slice(0, 3)
    .forEach((m) => {
      flags[m.i] = true;
    });
  return flags;
}

interface Benchmark {
  scid: string;
  totalCents: number;
  memberCents: number[];
}

/** Second-lowest household total among the silver plans sold at the ZIP (child-only plans only for children). */
function benchmarkFor(zip: string, ages: readonly number[]): Benchmark {
  const where = SERVICE_AREAS[zip]!;
  const ds = s.registry.get(2025)!.ds;
  const counted = countedFlags(ages);
  const hasAdult = ages.some((a) => a >= 21);
  const candidates: Benchmark[] = [];
  for (const p of FIXTURE_PLANS) {
    if (p.state !== where.state || p.metal !== 'Silver' || p.offExchangeOnly === true || !where.areas.includes(p.serviceArea)) continue;
    if (hasAdult && p.childOnly === true) continue;
    const premiums = ages.map((a) => ds.premium(p.scid, where.area, a));
    if (premiums.some((x) => x === null)) continue;
    const memberCents = premiums.map((x, i) => (counted[i] ? Math.round(x! * 100) : 0));
    candidates.push({ scid: p.scid, totalCents: memberCents.reduce((a, b) => a + b, 0), memberCents });
  }
  candidates.sort((a, b) => a.totalCents - b.totalCents || (a.scid < b.scid ? -1 : 1));
  assert.ok(candidates.length >= 2, `${zip}: at least two silver plans`);
  return candidates[1]!;
}

function assertHousehold(body: Body, e: Expected, income: number, size: number): void {
  assert.equal(body.household.income, income);
  assert.equal(body.household.size, size);
  assert.equal(body.household.fpl_amount, e.fplAmount);
  // The calculation's percentage is Form 8962 line 5 (decimals dropped); the exact ratio is beside it.
  assert.equal(body.household.fpl_percentage, Math.trunc(e.fplPercentage));
  assert.equal(body.household.fpl_percentage_exact, e.fplPercentage);
  assert.equal(body.household.applicable_percentage, e.applicable);
  assert.equal(body.household.expected_yearly_contribution, e.yearly);
  assert.equal(body.household.expected_monthly_contribution, e.monthly);
  assert.equal(body.eligible, e.eligible);
}

const aptcPath = (zip: string, income: number, size: number, ages: readonly number[]) =>
  `/v1/health/plans/aptc-estimate?zip=${zip}&household_income=${income}&household_size=${size}&ages=${ages.join(',')}`;

describe('APTC estimate', () => {
  test('a single adult in Texas (2024 contiguous guideline, 150–200 % band)', async () => {
    const e = expectedContribution('TX', 30_000, 1);
    assert.deepEqual(
      [e.fplAmount, e.fplPercentage, e.applicable, e.yearly, e.monthly],
      [15_060, 199.2, 1.96, 588, 49],
      'hand-worked values',
    );
    const bench = benchmarkFor(FIXTURE_ZIPS.harris, [40]);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 30_000, 1, [40])), 'calculateAptc');
    assertHousehold(body, e, 30_000, 1);
    assert.equal(body.benchmark_premium, bench.totalCents / 100);
    assert.equal(body.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(body.aptc_amount, (bench.totalCents - e.monthly * 100) / 100);
    assert.deepEqual(body.members, [
      { age: 40, slcsp_premium: bench.totalCents / 100, counted_in_benchmark: true, premium_basis: 'member_rate' },
    ]);
    assert.deepEqual(body.location, {
      zip: '77002',
      state: 'TX',
      county: 'Harris County',
      county_fips: '48201',
      rating_area: 'Rating Area 10',
      multiple_areas: false,
    });
    assert.equal(body.plan_year, 2025);
  });

  test('a single adult in Alaska uses the Alaska guideline', async () => {
    const e = expectedContribution('AK', 40_000, 1);
    assert.deepEqual(
      [e.fplAmount, e.fplPercentage, e.applicable, e.yearly, e.monthly],
      [18_810, 212.65, 2.48, 992, 83],
      'hand-worked values',
    );
    const bench = benchmarkFor(FIXTURE_ZIPS.anchorage, [40]);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.anchorage, 40_000, 1, [40])), 'calculateAptc');
    assertHousehold(body, e, 40_000, 1);
    assert.equal(body.benchmark_premium, bench.totalCents / 100);
    assert.equal(body.aptc_amount, (bench.totalCents - e.monthly * 100) / 100);
    assert.equal(body.location.state, 'AK');
    assert.equal(body.location.rating_area, 'Rating Area 1');
  });

  test('a single adult in Hawaii (no plan data): Hawaii guideline, benchmark from the SLCSP table', async () => {
    const e = expectedContribution('HI', 40_000, 1);
    assert.deepEqual(
      [e.fplAmount, e.fplPercentage, e.applicable, e.yearly, e.monthly],
      [17_310, 231.08, 3.24, 1296, 108],
      'hand-worked values',
    );
    const slcsp = s.registry.get(2025)!.ds.slcsp('HI', 1, 40);
    assert.ok(slcsp !== null);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.honolulu, 40_000, 1, [40])), 'calculateAptc');
    assertHousehold(body, e, 40_000, 1);
    assert.equal(body.benchmark_premium, slcsp.amount);
    assert.equal(body.aptc_amount, round2(slcsp.amount - e.monthly));
    assert.equal(body.benchmark_plan_id, null);
    assert.equal(body.benchmark_source, 'benchmark_only');
    assert.equal(body.location.state, 'HI');
  });

  test('a family with four children under 21: only the three oldest children are rated', async () => {
    const ages = [45, 43, 17, 14, 10, 6];
    const e = expectedContribution('TX', 80_000, 6);
    assert.deepEqual([e.fplAmount, e.applicable, e.yearly, e.monthly], [15_060 + 5 * 5_380, 1.6, 1280, 107], 'hand-worked values');
    const bench = benchmarkFor(FIXTURE_ZIPS.harris, ages);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 80_000, 6, ages)), 'calculateAptc');
    assertHousehold(body, e, 80_000, 6);
    assert.equal(body.benchmark_premium, bench.totalCents / 100);
    assert.equal(body.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(body.aptc_amount, (bench.totalCents - e.monthly * 100) / 100);
    assert.deepEqual(
      body.members,
      ages.map((age, i) => ({
        age,
        slcsp_premium: bench.memberCents[i]! / 100,
        counted_in_benchmark: i < 5,
        premium_basis: 'member_rate',
      })),
    );
    assert.equal(body.members[5].slcsp_premium, 0);
    // The fourth child really is free: the same family without the 6-year-old has the same benchmark.
    const five = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 80_000, 6, ages.slice(0, 5))), 'calculateAptc');
    assert.equal(five.benchmark_premium, body.benchmark_premium);
  });

  test('the order of the ages does not change which children are counted', async () => {
    const ages = [6, 45, 14, 17, 43, 10];
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 80_000, 6, ages)), 'calculateAptc');
    assert.deepEqual(
      body.members.map((m: { age: number }) => m.age),
      ages,
      'members in the order of ages',
    );
    assert.deepEqual(
      body.members.map((m: { counted_in_benchmark: boolean }) => m.counted_in_benchmark),
      [false, true, true, true, true, true],
    );
    assert.equal(body.benchmark_premium, benchmarkFor(FIXTURE_ZIPS.harris, ages).totalCents / 100);
  });

  test('below 100 % FPL: not eligible, no credit', async () => {
    const e = expectedContribution('TX', 15_000, 2);
    assert.equal(e.eligible, false);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 15_000, 2, [40, 38])), 'calculateAptc');
    assertHousehold(body, e, 15_000, 2);
    assert.equal(body.aptc_amount, 0);
    assert.equal(body.household.fpl_band, null);
    assert.equal(body.benchmark_premium, benchmarkFor(FIXTURE_ZIPS.harris, [40, 38]).totalCents / 100, 'the benchmark is still reported');
    assert.ok(body.notes.some((n: string) => /below 100/.test(n)));
  });

  test('above 400 % FPL in 2025: still eligible at 8.5 % (no cliff)', async () => {
    const e = expectedContribution('TX', 90_000, 1);
    assert.equal(e.applicable, 8.5);
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 90_000, 1, [64])), 'calculateAptc');
    assertHousehold(body, e, 90_000, 1);
    const bench = benchmarkFor(FIXTURE_ZIPS.harris, [64]);
    assert.equal(body.aptc_amount, Math.max(0, bench.totalCents - e.monthly * 100) / 100);
  });

  test('exactly 100 % FPL is eligible at 0 %: the credit is the whole benchmark', async () => {
    const body = await expectOk(await s.get(aptcPath(FIXTURE_ZIPS.harris, 15_060, 1, [30])), 'calculateAptc');
    assert.equal(body.eligible, true);
    assert.equal(body.household.applicable_percentage, 0);
    assert.equal(body.aptc_amount, body.benchmark_premium);
    assert.equal(body.aptc_amount, benchmarkFor(FIXTURE_ZIPS.harris, [30]).totalCents / 100);
  });
});

describe('search with income and household_size', () => {
  type Plan = { id: string; metal_level: string; premium: number; premium_with_credit: number | null; deductible: { individual: number } };
  const search = async (q: string): Promise<Plan[]> =>
    (await expectOk(await s.get(`/v1/health/plans?${q}`), 'searchPlans', q))._embedded.plans;

  test('at 120 % FPL silver plans are shown as their -06 variant and premium_with_credit = max(0, premium − APTC)', async () => {
    const income = 18_072; // 120 % of 15,060
    const e = expectedContribution('TX', income, 1);
    assert.equal(e.monthly, 0);
    const aptc = (benchmarkFor(FIXTURE_ZIPS.harris, [40]).totalCents - e.monthly * 100) / 100;
    const plans = await search(`zip=77002&age=40&income=${income}&household_size=1&per_page=100`);
    const silver = plans.filter((p) => p.metal_level === 'silver');
    assert.ok(silver.length >= 4);
    for (const p of silver) {
      assert.match(p.id, /-06$/, `${p.id} is the 94 % AV variant`);
      assert.equal(p.deductible.individual, 500, `${p.id}: the -06 variant's deductible`);
    }
    for (const p of plans.filter((x) => x.metal_level !== 'silver')) assert.match(p.id, /-01$/);
    const cents = (d: number): number => Math.round(d * 100);
    for (const p of plans)
      assert.equal(
        p.premium_with_credit,
        fixtureCreditCents(p.id, p.metal_level, cents(p.premium), cents(aptc)) / 100,
        `${p.id} premium_with_credit`,
      );
    // The credit exceeds the fixture bronze plan's EHB share (90 %): the other 10 % is still paid.
    const capped = plans.find((p) => p.id === '11111TX0010003-01')!;
    assert.ok(aptc > capped.premium);
    assert.equal(capped.premium_with_credit, (cents(capped.premium) - Math.round(cents(capped.premium) * 0.9)) / 100);
    assert.ok(
      plans.some((p) => p.premium_with_credit === 0),
      'plans cheaper than the credit are free',
    );
    const detail = await expectOk(await s.get('/v1/health/plans/11111TX0010001-06'), 'getPlanById');
    assert.equal(silver.find((p) => p.id === '11111TX0010001-06')!.deductible.individual, detail.deductible.individual_tier1);
  });

  test('at 232 % FPL silver plans are shown as -04 and the credit is benchmark − contribution', async () => {
    const e = expectedContribution('TX', 35_000, 1);
    assert.deepEqual([e.applicable, e.yearly, e.monthly], [3.28, 1148, 96], 'hand-worked values');
    const aptc = (benchmarkFor(FIXTURE_ZIPS.harris, [40]).totalCents - e.monthly * 100) / 100;
    const plans = await search('zip=77002&age=40&income=35000&household_size=1&per_page=100');
    for (const p of plans) {
      if (p.metal_level === 'silver') {
        assert.match(p.id, /-04$/);
        assert.equal(p.deductible.individual, 3500);
      }
      const cents = (d: number): number => Math.round(d * 100);
      assert.equal(p.premium_with_credit, fixtureCreditCents(p.id, p.metal_level, cents(p.premium), cents(aptc)) / 100, p.id);
    }
  });

  test('above 250 % FPL there is no CSR variant', async () => {
    const plans = await search('zip=77002&age=40&income=60000&household_size=1&metal_level=silver');
    assert.ok(plans.length > 0 && plans.every((p) => p.id.endsWith('-01')));
  });

  test('the household size counts for the FPL: a family of four at 35,000 is at 112 % → -06', async () => {
    const plans = await search('zip=77002&age=40&income=35000&household_size=4&metal_level=silver');
    assert.ok(plans.length > 0 && plans.every((p) => p.id.endsWith('-06')));
  });

  test('catastrophic plans keep premium_with_credit = premium', async () => {
    const young = await search('zip=77002&age=25&income=18072&household_size=1&per_page=100');
    const cat = young.find((p) => p.metal_level === 'catastrophic');
    assert.ok(cat !== undefined, 'listed at 25');
    assert.equal(cat.premium_with_credit, cat.premium);
    const explicit = await search('zip=77002&age=45&income=18072&household_size=1&metal_level=catastrophic');
    assert.equal(explicit.length, 1);
    assert.equal(explicit[0]!.premium_with_credit, explicit[0]!.premium);
  });

  test('without income premium_with_credit is null', async () => {
    const plans = await search('zip=77002&age=40');
    assert.ok(plans.every((p) => p.premium_with_credit === null && p.id.endsWith('-01')));
  });

  test('below 100 % FPL: no credit and no CSR variant', async () => {
    const plans = await search('zip=77002&age=40&income=10000&household_size=1&per_page=100');
    for (const p of plans) {
      assert.match(p.id, /-01$/);
      assert.equal(p.premium_with_credit, p.premium);
    }
  });

  test('Alaska: the Alaska guideline decides the CSR band', async () => {
    // 26,000 is 172.6 % of the contiguous guideline (-05) but 138.2 % of Alaska's (-06).
    const plans = await search(`zip=${FIXTURE_ZIPS.anchorage}&age=40&income=26000&household_size=1&metal_level=silver`);
    assert.ok(plans.length === 2 && plans.every((p) => p.id.endsWith('-06')), plans.map((p) => p.id).join());
  });
});
