/**
 * @module Checks of the engine against the outside world on real PY2024 premiums: the SLCSP
 * of every rating area of CT, RI and VT against the KFF-derived benchmarks, and one APTC per state
 * worked by hand as on IRS Form 8962.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadBenchmarks } from '../../build/benchmarks.ts';
import { openCurrentDataset, type Dataset } from '../../src/engine/dataset.ts';
import { loadRules } from '../../src/engine/rules.ts';
import { estimateAptc } from '../../src/engine/subsidy.ts';
import { buildRealYear, REPO_ROOT } from '../helpers/build-real-year.ts';

const dir = mkdtempSync(join(tmpdir(), 'hpd-real-2024-'));
let ds: Dataset;
before(async () => {
  await buildRealYear(dir, 2024);
  ds = openCurrentDataset(join(dir, 'builds'), 2024);
});
after(() => {
  ds?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rules = loadRules(2024);

describe('SLCSP at ages 0–14 from the real rates against benchmarks/slcsp_by_rating_area.yaml (2024)', () => {
  const benchmarks = loadBenchmarks(join(REPO_ROOT, '../shared/data/benchmarks/slcsp_by_rating_area.yaml'), 2024);
  const areas = [
    ...Array.from({ length: 8 }, (_, i) => ['CT', i + 1] as const),
    ['RI', 1] as const,
    // Vermont's benchmark is the base adult premium; community rating makes it the 0–14 premium too.
    ['VT', 1] as const,
  ];
  for (const [state, area] of areas) {
    test(`${state} Rating Area ${area} within $2`, () => {
      const engine = ds.slcsp(state, area, 10);
      const benchmark = benchmarks.get(`${state}:${area}`);
      assert.equal(engine?.source, 'rate_puf');
      assert.ok(benchmark !== undefined);
      assert.ok(Math.abs(engine.amount - benchmark) <= 2, `${state} ${area}: engine ${engine.amount}, benchmark ${benchmark}`);
    });
  }
});

describe('APTC worked by hand, Form 8962 style, on real PY2024 premiums', () => {
  const at = (zip: string) => ds.resolveZip(zip)![0]!;

  test('a single adult in Hartford, CT', () => {
    /*
     * Age 40, income $30,000, household of 1, ZIP 06103 (Hartford County → Rating Area 2).
     * Line 4, FPL: 2023 guideline for 1 person = $14,580 (PY2024 uses the 2023 guidelines).
     * Line 5: 30,000 / 14,580 = 205.76 % → 205 (decimals dropped).
     * Line 7: IRA table, 200–250 % band runs 2.00 % → 4.00 %: 2.00 + (205 − 200)/50 × 2.00 = 2.20 %.
     * Line 8a: 30,000 × 0.0220 = $660 a year; 8b: 660 / 12 = $55 a month.
     * Benchmark: on-exchange silver -01 plans of CT Rating Area 2 at age 40 in CTRates05102024.csv
     * (2024-01-01 rows): 86545CT1330001 $593.85, 76962CT0010005 $605.85, 94815CT0050009 $667.75;
     * the second lowest is $605.85.
     * EHB portion: CTPlans05102024.csv gives 76962CT0010005-01 `EHB PERCENT PREMIUM` 99 %, and the credit
     * counts only that part (26 U.S.C. §36B(b)(3)(D)): 605.85 × 0.99 = 599.7915 → $599.79.
     * APTC = 599.79 − 55 = $544.79 a month.
     */
    const e = estimateAptc(ds, rules, at('06103'), { income: 30000, householdSize: 1, ages: [40] });
    assert.deepEqual(
      [e.fpl_amount, e.fpl_percentage_truncated, e.applicable_percentage, e.yearly_contribution, e.monthly_contribution],
      [14580, 205, 2.2, 660, 55],
    );
    assert.deepEqual([e.benchmark_plan_id, e.benchmark_premium, e.benchmark_source], ['76962CT0010005-01', 605.85, 'rate_puf']);
    assert.deepEqual([e.benchmark_ehb_share, e.benchmark_ehb_premium], [0.99, 599.79]);
    assert.equal(e.aptc_amount, 544.79);
  });

  test('a single adult in Providence, RI', () => {
    /*
     * Age 30, income $25,000, household of 1, ZIP 02903 (Providence County, RI's one rating area).
     * Line 4: $14,580. Line 5: 25,000 / 14,580 = 171.47 % → 171.
     * Line 7: 150–200 % band runs 0.00 % → 2.00 %: (171 − 150)/50 × 2.00 = 0.84 %.
     * Line 8a: 25,000 × 0.0084 = $210; 8b: 210 / 12 = 17.50 → $18 (whole dollars, half up).
     * Benchmark: silver -01 at age 30 in RIRates05102024.csv: 77514RI0010002 $337.69,
     * 77514RI0010001 $355.31, 77514RI0010011 $356.03, …; the second lowest is $355.31.
     * EHB portion (RIPlans05102024.csv, 99 %): 355.31 × 0.99 = 351.7569 → $351.76.
     * APTC = 351.76 − 18 = $333.76 a month.
     */
    const e = estimateAptc(ds, rules, at('02903'), { income: 25000, householdSize: 1, ages: [30] });
    assert.deepEqual(
      [e.fpl_amount, e.fpl_percentage_truncated, e.applicable_percentage, e.yearly_contribution, e.monthly_contribution],
      [14580, 171, 0.84, 210, 18],
    );
    assert.deepEqual([e.benchmark_plan_id, e.benchmark_premium, e.benchmark_ehb_premium], ['77514RI0010001-01', 355.31, 351.76]);
    assert.equal(e.aptc_amount, 333.76);
  });

  test('a family of four in Burlington, VT (community rating: the family tier of the file)', () => {
    /*
     * Adults 40 and 38, children 10 and 8; income $70,000; household of 4; ZIP 05401 (Chittenden).
     * Line 4: 14,580 + 3 × 5,140 = $30,000. Line 5: 70,000 / 30,000 = 233.33 % → 233.
     * Line 7: 200–250 % band: 2.00 + (233 − 200)/50 × 2.00 = 3.32 %.
     * Line 8a: 70,000 × 0.0332 = $2,324; 8b: 2,324 / 12 = 193.67 → $194.
     * Benchmark: Vermont rates by family tier, not by age. Silver -01 plans' `COUPLE AND TWO
     * DEPENDENTS` in VTRates05102024.csv: 77566VT0040024 $2,664.44, 77566VT0040005 $2,668.32,
     * 77566VT0040006 $2,703.50, …; the second lowest is $2,668.32 (its single rate $949.58).
     * EHB portion (VTPlans05102024.csv, 99 %): 2,668.32 × 0.99 = 2,641.6368 → $2,641.64.
     * APTC = 2,641.64 − 194 = $2,447.64 a month.
     */
    const e = estimateAptc(ds, rules, at('05401'), { income: 70000, householdSize: 4, ages: [40, 38, 10, 8] });
    assert.deepEqual(
      [e.fpl_amount, e.fpl_percentage_truncated, e.applicable_percentage, e.yearly_contribution, e.monthly_contribution],
      [30000, 233, 3.32, 2324, 194],
    );
    assert.deepEqual([e.benchmark_plan_id, e.benchmark_premium, e.benchmark_ehb_premium], ['77566VT0040005-01', 2668.32, 2641.64]);
    assert.equal(e.aptc_amount, 2447.64);
    // Each member's amount is a share of the one tier premium, and says so.
    assert.deepEqual(
      e.members.map((m) => m.premium_basis),
      ['tier_share', 'tier_share', 'tier_share', 'tier_share'],
    );
    // The amount is the file's, read from the build, not only the 2.81 factor that gives the same cents.
    assert.equal(ds.familyTierCents('77566VT0040005', 1, 'coupleAndTwoDependents'), 266832);
    assert.equal(ds.familyTierCents('77566VT0040005', 1, 'primarySubscriberAndOneDependent'), 183269);
  });
});
