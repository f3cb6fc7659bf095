/**
 * @module The one-pass ranking of lowest-cost plans (src/engine/lowest-cost-plans.ts) against a plain
 * reference: price every qualifying plan of the location for the household, sort, take the first two
 * silver plans and the first bronze. Random households over real builds: PY2025 locations with 40–130
 * plans (members rated one by one), and PY2024's CT, RI and VT (family tiers).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PLAN_FLAG } from '../../src/engine/build-format.ts';
import { openCurrentDataset, type Dataset, type ZipLocation } from '../../src/engine/dataset.ts';
import { householdRating, householdTotalCents, tierColumn } from '../../src/engine/household.ts';
import { rankLowestCost } from '../../src/engine/lowest-cost-plans.ts';
import { loadRules } from '../../src/engine/rules.ts';
import type { TaxYearRules } from '../../src/engine/rules-types.ts';
import { buildRealYear } from '../helpers/build-real-year.ts';

let dir: string;
const years = new Map<number, { ds: Dataset; rules: TaxYearRules }>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-lowest-cost-'));
  for (const year of [2024, 2025]) {
    await buildRealYear(dir, year);
    years.set(year, { ds: openCurrentDataset(join(dir, 'builds'), year), rules: loadRules(year) });
  }
});
after(() => {
  for (const y of years.values()) y.ds.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Priced {
  readonly id: string;
  readonly total: number;
}

function reference(ds: Dataset, rules: TaxYearRules, loc: ZipLocation, ages: readonly number[]): { silver: Priced[]; bronze: Priced[] } {
  const limit = rules.child_age_limit.value;
  const hasAdult = ages.some((a) => a >= limit);
  const rating = householdRating(ages, rules, loc.state);
  const column = rating.counted === null ? tierColumn(ages, limit) : null;
  const silver: Priced[] = [];
  const bronze: Priced[] = [];
  for (let pos = 0; pos < ds.listSize(loc.listId); pos++) {
    const plan = ds.plan(ds.listPlan(loc.listId, pos));
    const at = (age: number): number => ds.listPremiumCents(loc.listId, pos, age);
    if ((plan.flags & PLAN_FLAG.onExchange) === 0) continue;
    if (hasAdult && (plan.flags & PLAN_FLAG.childOnly) !== 0) continue;
    if (ages.some((a) => at(a) === 0)) continue;
    const tier = column === null ? null : ds.familyTierCents(plan.standardComponentId, loc.ratingArea, column);
    const total = tier ?? householdTotalCents(rating, at);
    if (total <= 0) continue;
    const into = plan.metal === 'silver' ? silver : plan.metal === 'bronze' || plan.metal === 'expanded bronze' ? bronze : null;
    into?.push({ id: plan.standardComponentId, total });
  }
  const order = (a: Priced, b: Priced): number => a.total - b.total || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return { silver: silver.sort(order), bronze: bronze.sort(order) };
}

test('random households in 2025 and 2024 locations: the same first and second silver plan and first bronze plan as a full sort', () => {
  let seed = 20_241_125;
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  let compared = 0;
  const places: Array<[number, string]> = [
    [2025, '77002'],
    [2025, '33101'],
    [2025, '30301'],
    [2025, '85001'],
    [2024, '06103'],
    [2024, '02903'],
    [2024, '05401'],
    [2024, '05602'],
  ];
  for (const [year, zip] of places) {
    const { ds, rules } = years.get(year)!;
    const loc = ds.resolveZip(zip)?.[0];
    assert.ok(loc !== undefined, zip);
    for (let i = 0; i < 80; i++) {
      const ages = Array.from({ length: 1 + random(6) }, () => random(66));
      const ref = reference(ds, rules, loc, ages);
      const got = rankLowestCost(ds, rules, loc, ages);
      const label = `${zip} ${ages.join(',')}`;
      if (ref.silver.length === 0) {
        assert.equal(got, null, label);
        continue;
      }
      assert.ok(got !== null, label);
      assert.deepEqual([got.first.id, got.first.totalCents], [ref.silver[0]!.id, ref.silver[0]!.total], `${label}: first silver`);
      const second = ref.silver[1] ?? null;
      assert.deepEqual(
        got.second === null ? null : [got.second.id, got.second.totalCents],
        second === null ? null : [second.id, second.total],
        `${label}: second silver`,
      );
      const bronze = ref.bronze[0] ?? null;
      assert.deepEqual(
        got.bronze === null ? null : [got.bronze.id, got.bronze.totalCents],
        bronze === null ? null : [bronze.id, bronze.total],
        `${label}: bronze`,
      );
      compared++;
    }
  }
  assert.ok(compared > 500, `${compared} households compared`);
});
