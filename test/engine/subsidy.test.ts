import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture } from '../helpers/fixture-build.ts';
import { openCurrentDataset, type Dataset, type ZipLocation } from '../../src/engine/dataset.ts';
import { csrVariantFor, estimateAptc, NOTE_BELOW_100 } from '../../src/engine/subsidy.ts';
import { loadRules } from '../../src/engine/rules.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

const rules2026 = loadRules(2026);
const rules2025 = loadRules(2025);

/** Silver, on-exchange, not child-only plans offered in Harris ZIP 77002 (fixture-inputs.ts): TXS001, TXS002, TXS003. */
const HARRIS_ADULT_SILVER = ['11111TX0010001', '11111TX0010002', '22222TX0020001', '33333TX0030001'];
/** The child-only silver plan, offered state-wide. */
const CHILD_ONLY_SILVER = '22222TX0020003';
const AK_SILVER = ['44444AK0040001', '44444AK0040002'];

let dir: string;
let ds: Dataset;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-subsidy-'));
  ds = openCurrentDataset(await buildFixture(dir), 2025);
});
after(() => {
  ds?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const loc = (zip: string): ZipLocation => ds.resolveZip(zip)![0]!;
const toCents = (dollars: number): number => Math.round(dollars * 100);

/**
 * Second-lowest household total by hand: per plan, the sum of ds.premium at the counted ages (the
 * caller lists which ages count), ties by plan id.
 */
function secondLowest(scids: readonly string[], area: number, countedAges: readonly number[]): { scid: string; cents: number } {
  const totals = scids
    .map((scid) => ({ scid, cents: countedAges.reduce((s, a) => s + toCents(ds.premium(scid, area, a)!), 0) }))
    .sort((a, b) => a.cents - b.cents || (a.scid < b.scid ? -1 : 1));
  return totals[1] ?? totals[0]!;
}

describe('APTC contribution arithmetic (Form 8962 conventions)', () => {
  test('worked example 1: single adult, 48 states, 2026, $40,000 → 255 % → 8.59 % → $3,436/yr → $286/mo', () => {
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 40_000, householdSize: 1, ages: [40] });
    assert.equal(r.fpl_amount, 15_650);
    // 40,000 / 15,650 = 2.555910… → 255.59 %, truncated 255.
    assert.equal(r.fpl_percentage, 255.59);
    assert.equal(r.fpl_percentage_truncated, 255);
    assert.deepEqual(r.band, { from_pct: 250, to_pct: 300 });
    // 8.44 + (5 / 50) × (9.96 − 8.44) = 8.592 → 8.59
    assert.equal(r.applicable_percentage, 8.59);
    assert.equal(r.yearly_contribution, 3_436);
    assert.equal(r.monthly_contribution, 286);
    assert.equal(r.eligible, true);

    const bench = secondLowest(HARRIS_ADULT_SILVER, 10, [40]);
    assert.equal(r.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(toCents(r.benchmark_premium!), bench.cents);
    assert.equal(toCents(r.aptc_amount), Math.max(0, bench.cents - 28_600));
    assert.equal(r.benchmark_source, 'modeled');
    assert.ok(
      r.notes.some((n) => /modeled/.test(n)),
      'modeled premiums are flagged',
    );
    assert.deepEqual(r.members, [{ age: 40, slcsp_premium: bench.cents / 100, counted_in_benchmark: true, premium_basis: 'member_rate' }]);
  });

  test('a household exactly at 133 % FPL is in the 133 % band (no float truncation to 132)', () => {
    // 1.33 × 15,650 = 20,814.50 → 133 % → 3.14 %; 20,814.50 × 0.0314 = 653.58 → $654; 654 / 12 = 54.5 → $55.
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 20_814.5, householdSize: 1, ages: [30] });
    assert.equal(r.fpl_percentage_truncated, 133);
    assert.equal(r.applicable_percentage, 3.14);
    assert.equal(r.yearly_contribution, 654);
    assert.equal(r.monthly_contribution, 55);
  });

  test('Alaska uses its own FPL table: $30,000 single → 153 % → 4.33 %', () => {
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.anchorage), { income: 30_000, householdSize: 1, ages: [40] });
    // AK 2025 guideline (2026 coverage): $19,550. 30,000 / 19,550 = 1.534526… → 153.45 %.
    assert.equal(r.fpl_amount, 19_550);
    assert.equal(r.fpl_percentage, 153.45);
    assert.equal(r.fpl_percentage_truncated, 153);
    // 4.19 + (3 / 50) × (6.60 − 4.19) = 4.3346 → 4.33; 30,000 × 0.0433 = 1,299; 1,299 / 12 = 108.25 → 108.
    assert.equal(r.applicable_percentage, 4.33);
    assert.equal(r.yearly_contribution, 1_299);
    assert.equal(r.monthly_contribution, 108);
    // Anchorage is rating area 1; both AK silver plans are benchmark-eligible.
    const bench = secondLowest(AK_SILVER, 1, [40]);
    assert.equal(r.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(toCents(r.benchmark_premium!), bench.cents);
    assert.equal(toCents(r.aptc_amount), Math.max(0, bench.cents - 10_800));
    // The same income in the 48 states: 30,000 / 15,650 = 191.69 %.
    const tx = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 30_000, householdSize: 1, ages: [40] });
    assert.equal(tx.fpl_percentage, 191.69);
  });

  test('Hawaii (no plan data in the build): its FPL table and the benchmark table SLCSP, labelled as a KFF approximation', () => {
    const l = loc(FIXTURE_ZIPS.honolulu);
    assert.equal(l.listId, 0xffff_ffff);
    const r = estimateAptc(ds, rules2026, l, { income: 50_000, householdSize: 1, ages: [40] });
    // HI guideline $17,990: 50,000 / 17,990 = 2.779321… → 277.93 %, truncated 277.
    assert.equal(r.fpl_amount, 17_990);
    assert.equal(r.fpl_percentage, 277.93);
    assert.equal(r.fpl_percentage_truncated, 277);
    // 8.44 + (27 / 50) × 1.52 = 9.2608 → 9.26; 50,000 × 0.0926 = 4,630; 4,630 / 12 = 385.83 → 386.
    assert.equal(r.applicable_percentage, 9.26);
    assert.equal(r.yearly_contribution, 4_630);
    assert.equal(r.monthly_contribution, 386);
    const slcsp = toCents(ds.slcsp('HI', 1, 40)!.amount);
    assert.equal(toCents(r.benchmark_premium!), slcsp);
    assert.equal(toCents(r.aptc_amount), Math.max(0, slcsp - 38_600));
    assert.equal(r.benchmark_source, 'benchmark_only');
    assert.equal(r.benchmark_plan_id, null);
    assert.ok(r.notes.some((n) => /approximation/.test(n) && /KFF/.test(n)));
  });

  test('Hawaii family with four children under 21: per-member SLCSP with the three-child rule', () => {
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.honolulu), { income: 90_000, householdSize: 5, ages: [45, 17, 14, 10, 3] });
    // The 3-year-old is the fourth child under 21.
    const s = (age: number): number => toCents(ds.slcsp('HI', 1, age)!.amount);
    const expected = s(45) + s(17) + s(14) + s(10);
    assert.equal(toCents(r.benchmark_premium!), expected);
    assert.deepEqual(
      r.members.map((m) => [m.age, toCents(m.slcsp_premium), m.counted_in_benchmark]),
      [
        [45, s(45), true],
        [17, s(17), true],
        [14, s(14), true],
        [10, s(10), true],
        [3, 0, false],
      ],
    );
    // HI guideline for 5: 17,990 + 4 × 6,330 = 43,310; 90,000 / 43,310 = 207.80 % → 207 →
    // 6.60 + (7 / 50) × 1.84 = 6.8576 → 6.86; 90,000 × 0.0686 = 6,174; / 12 = 514.5 → 515.
    assert.equal(r.fpl_amount, 43_310);
    assert.equal(r.applicable_percentage, 6.86);
    assert.equal(r.yearly_contribution, 6_174);
    assert.equal(r.monthly_contribution, 515);
    assert.equal(toCents(r.aptc_amount), Math.max(0, expected - 51_500));
  });

  test('family with four children under 21: only the three oldest count toward the benchmark', () => {
    const ages = [40, 38, 16, 12, 9, 5];
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 60_000, householdSize: 6, ages });
    // FPL for 6: 15,650 + 5 × 5,500 = 43,150; 60,000 / 43,150 = 139.05 % → 139;
    // 3.14 + (6 / 17) × (4.19 − 3.14) = 3.5106 → 3.51; 60,000 × 0.0351 = 2,106; 2,106 / 12 = 175.5 → 176.
    assert.equal(r.fpl_amount, 43_150);
    assert.equal(r.fpl_percentage, 139.05);
    assert.deepEqual(r.band, { from_pct: 133, to_pct: 150 });
    assert.equal(r.applicable_percentage, 3.51);
    assert.equal(r.yearly_contribution, 2_106);
    assert.equal(r.monthly_contribution, 176);

    const bench = secondLowest(HARRIS_ADULT_SILVER, 10, [40, 38, 16, 12, 9]);
    assert.equal(r.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(toCents(r.benchmark_premium!), bench.cents);
    const p = (age: number): number => toCents(ds.premium(bench.scid, 10, age)!);
    assert.deepEqual(
      r.members.map((m) => [m.age, toCents(m.slcsp_premium), m.counted_in_benchmark]),
      [
        [40, p(40), true],
        [38, p(38), true],
        [16, p(16), true],
        [12, p(12), true],
        [9, p(9), true],
        [5, 0, false],
      ],
    );
    assert.equal(toCents(r.aptc_amount), Math.max(0, bench.cents - 17_600));
    assert.ok(r.notes.some((n) => /oldest children/.test(n)));

    // If the 16-year-old were 22, the 5-year-old is charged too.
    const older = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 60_000, householdSize: 6, ages: [40, 38, 22, 12, 9, 5] });
    const bench22 = secondLowest(HARRIS_ADULT_SILVER, 10, [40, 38, 22, 12, 9, 5]);
    assert.equal(toCents(older.benchmark_premium!), bench22.cents);
    assert.equal(older.members[5]!.counted_in_benchmark, true);
  });

  test('Montgomery County (one adult silver plan): it is the benchmark for adults; children may use the child-only plan', () => {
    // Area 27 is served only by the whole-state issuer 22222: one adult silver plan and one child-only silver plan.
    const l = loc(FIXTURE_ZIPS.montgomery);
    assert.equal(l.ratingArea, 27);
    const adult = estimateAptc(ds, rules2026, l, { income: 40_000, householdSize: 1, ages: [40] });
    // Only one silver plan can cover an adult, so that plan is the benchmark (not the child-only one).
    assert.equal(adult.benchmark_plan_id, '22222TX0020001-01');
    assert.equal(toCents(adult.benchmark_premium!), toCents(ds.premium('22222TX0020001', 27, 40)!));
    // Parent and child: still adult plans only.
    const family = estimateAptc(ds, rules2026, l, { income: 40_000, householdSize: 2, ages: [40, 10] });
    assert.equal(family.benchmark_plan_id, '22222TX0020001-01');
    // Children alone: both plans qualify; the second-lowest household total is the benchmark.
    const kids = estimateAptc(ds, rules2026, l, { income: 40_000, householdSize: 3, ages: [10, 8] });
    const bench = secondLowest(['22222TX0020001', CHILD_ONLY_SILVER], 27, [10, 8]);
    assert.equal(kids.benchmark_plan_id, `${bench.scid}-01`);
    assert.equal(toCents(kids.benchmark_premium!), bench.cents);
    // With the fixture's modeled prices the child-only plan is the dearer of the two, so it is the benchmark here.
    assert.equal(bench.scid, CHILD_ONLY_SILVER);
  });

  test('below 100 % FPL: not eligible, no credit, a note', () => {
    const r = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 15_000, householdSize: 1, ages: [40] });
    // 15,000 / 15,650 = 95.85 %
    assert.equal(r.fpl_percentage, 95.85);
    assert.equal(r.fpl_percentage_truncated, 95);
    assert.equal(r.eligible, false);
    assert.equal(r.aptc_amount, 0);
    assert.equal(r.applicable_percentage, null);
    assert.equal(r.band, null);
    assert.equal(r.yearly_contribution, 0);
    assert.equal(r.monthly_contribution, 0);
    assert.ok(r.notes.includes(NOTE_BELOW_100));
    assert.equal(NOTE_BELOW_100, 'Income below 100 % FPL: not eligible for the premium tax credit; Medicaid or the coverage gap may apply');
    assert.ok(r.benchmark_premium !== null && r.benchmark_premium > 0, 'the benchmark is still reported');
  });

  test('2026: above 400 % FPL is not eligible (cliff), tested on the unrounded ratio', () => {
    const over = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 70_000, householdSize: 1, ages: [40] });
    assert.equal(over.eligible, false);
    assert.equal(over.aptc_amount, 0);
    assert.equal(over.applicable_percentage, null);
    assert.ok(over.notes.some((n) => /400 %/.test(n)));
    // Exactly 4 × 15,650 = 62,600 is still eligible at 9.96 %: 62,600 × 0.0996 = 6,234.96 → 6,235; / 12 = 519.58 → 520.
    const at = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 62_600, householdSize: 1, ages: [40] });
    assert.equal(at.eligible, true);
    assert.equal(at.fpl_percentage_truncated, 400);
    assert.equal(at.applicable_percentage, 9.96);
    assert.equal(at.yearly_contribution, 6_235);
    assert.equal(at.monthly_contribution, 520);
    // One dollar more is 400.006 %: truncation says 400, the unrounded test says ineligible (Form 8962 writes 401).
    const just = estimateAptc(ds, rules2026, loc(FIXTURE_ZIPS.harris), { income: 62_601, householdSize: 1, ages: [40] });
    assert.equal(just.eligible, false);
    assert.equal(just.fpl_percentage_truncated, 401);
  });

  test('2025: above 400 % FPL stays eligible at 8.5 %', () => {
    const r = estimateAptc(ds, rules2025, loc(FIXTURE_ZIPS.harris), { income: 70_000, householdSize: 1, ages: [40] });
    // 2024 guideline $15,060: 70,000 / 15,060 = 464.81 % → 464; 70,000 × 0.085 = 5,950; 5,950 / 12 = 495.83 → 496.
    assert.equal(r.fpl_amount, 15_060);
    assert.equal(r.fpl_percentage, 464.81);
    assert.equal(r.eligible, true);
    assert.deepEqual(r.band, { from_pct: 400, to_pct: null });
    assert.equal(r.applicable_percentage, 8.5);
    assert.equal(r.yearly_contribution, 5_950);
    assert.equal(r.monthly_contribution, 496);
    const bench = secondLowest(HARRIS_ADULT_SILVER, 10, [40]);
    assert.equal(toCents(r.aptc_amount), Math.max(0, bench.cents - 49_600));
  });
});

describe('CSR variant (45 CFR 155.305(g))', () => {
  test('bands 100–150 → 06, over 150–200 → 05, over 200–250 → 04, else null', () => {
    // 48 states, one person: 100 % = 15,650; 150 % = 23,475; 200 % = 31,300; 250 % = 39,125.
    const v = (income: number): string | null => csrVariantFor(rules2026, income, 1, 'TX');
    assert.equal(v(15_649), null);
    assert.equal(v(15_650), '06');
    assert.equal(v(23_475), '06');
    assert.equal(v(23_476), '05');
    assert.equal(v(31_300), '05');
    assert.equal(v(31_301), '04');
    assert.equal(v(39_125), '04');
    assert.equal(v(39_126), null);
    assert.equal(v(80_000), null);
  });

  test('Alaska and Hawaii use their own FPL', () => {
    // $29,000: AK 29,000 / 19,550 = 148 % → 06; HI 29,000 / 17,990 = 161 % → 05; TX 185 % → 05.
    assert.equal(csrVariantFor(rules2026, 29_000, 1, 'AK'), '06');
    assert.equal(csrVariantFor(rules2026, 29_000, 1, 'HI'), '05');
    // $24,000: AK 122.8 % → 06, TX 153.4 % → 05.
    assert.equal(csrVariantFor(rules2026, 24_000, 1, 'AK'), '06');
    assert.equal(csrVariantFor(rules2026, 24_000, 1, 'TX'), '05');
  });
});
