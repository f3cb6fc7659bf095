/**
 * Checks the shipped rule tables against the figures in shared/docs/domain.md §1–4, and that the
 * validator rejects malformed tables with a message naming the file and the field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ageBand } from '../../src/engine/age-bands.ts';
import { ageCurveFor, applicablePercentage, availableRuleYears, loadRules, povertyGuideline } from '../../src/engine/rules.ts';
import type { SourceRef, TaxYearRules } from '../../src/engine/rules-types.ts';
import { InvariantError } from '../../src/invariant.ts';

const r2026 = loadRules(2026);
const r2025 = loadRules(2025);

test('both tax years load from the default directory', () => {
  assert.equal(r2026.tax_year, 2026);
  assert.equal(r2025.tax_year, 2025);
  const years = availableRuleYears();
  assert.ok(years.includes(2025) && years.includes(2026));
  assert.deepEqual(
    years,
    [...years].sort((a, b) => a - b),
  );
});

test('FPL: 2026 coverage uses the 2025 guidelines (domain.md §2.1)', () => {
  assert.equal(r2026.fpl.guideline_year, 2025);
  const contiguous = [15650, 21150, 26650, 32150, 37650, 43150, 48650, 54150];
  const ak = [19550, 26430, 33310, 40190, 47070, 53950, 60830, 67710];
  const hi = [17990, 24320, 30650, 36980, 43310, 49640, 55970, 62300];
  for (let n = 1; n <= 8; n++) {
    assert.equal(povertyGuideline(r2026, 'TX', n), contiguous[n - 1], `contiguous size ${n}`);
    assert.equal(povertyGuideline(r2026, 'DC', n), contiguous[n - 1], `DC size ${n}`);
    assert.equal(povertyGuideline(r2026, 'AK', n), ak[n - 1], `AK size ${n}`);
    assert.equal(povertyGuideline(r2026, 'HI', n), hi[n - 1], `HI size ${n}`);
  }
  assert.equal(povertyGuideline(r2026, 'ak', 4), 40190);
  // §1.5: the 400 % ceiling for a family of three is $106,600.
  assert.equal(4 * povertyGuideline(r2026, 'NY', 3), 106600);
  assert.throws(() => povertyGuideline(r2026, 'TX', 0), InvariantError);
});

test('FPL: 2025 coverage uses the 2024 guidelines (domain.md §2.1)', () => {
  assert.equal(r2025.fpl.guideline_year, 2024);
  const contiguous = [15060, 20440, 25820, 31200, 36580, 41960, 47340, 52720];
  const ak = [18810, 25540, 32270, 39000, 45730, 52460, 59190, 65920];
  const hi = [17310, 23500, 29690, 35880, 42070, 48260, 54450, 60640];
  for (let n = 1; n <= 8; n++) {
    assert.equal(povertyGuideline(r2025, 'FL', n), contiguous[n - 1], `contiguous size ${n}`);
    assert.equal(povertyGuideline(r2025, 'AK', n), ak[n - 1], `AK size ${n}`);
    assert.equal(povertyGuideline(r2025, 'HI', n), hi[n - 1], `HI size ${n}`);
  }
});

test('FPL: 2024 coverage uses the 2023 guidelines, $14,580 + $5,140 (shared/data/README.md §4.7), never 2024 ones', () => {
  const r2024 = loadRules(2024);
  assert.equal(r2024.fpl.guideline_year, 2023);
  const contiguous = [14580, 19720, 24860, 30000, 35140, 40280, 45420, 50560];
  for (let n = 1; n <= 8; n++) {
    assert.equal(povertyGuideline(r2024, 'CT', n), contiguous[n - 1], `contiguous size ${n}`);
    assert.equal(povertyGuideline(r2024, 'VT', n), contiguous[n - 1], `VT size ${n}`);
  }
  assert.equal(povertyGuideline(r2024, 'AK', 1), 18210);
  assert.equal(povertyGuideline(r2024, 'HI', 2), 16770 + 5910);
  // The IRA applicable percentages: the same bands as 2025, no 400 % cliff.
  assert.deepEqual(r2024.applicable_percentage.bands, r2025.applicable_percentage.bands);
  assert.equal(r2024.cap_at_400_fpl.value, false);
  assert.deepEqual(r2024.moop_limit.value, { self_only: 9450, other_than_self_only: 18900 });
});

test('scalar rules match domain.md §1 and §4', () => {
  assert.equal(r2026.required_contribution_pct.value, 9.96);
  assert.equal(r2025.required_contribution_pct.value, 9.02);
  assert.deepEqual(r2026.moop_limit.value, { self_only: 10600, other_than_self_only: 21200 });
  assert.deepEqual(r2025.moop_limit.value, { self_only: 9200, other_than_self_only: 18400 });
  assert.equal(r2026.cap_at_400_fpl.value, true);
  assert.equal(r2025.cap_at_400_fpl.value, false);
  for (const r of [r2025, r2026]) {
    assert.equal(r.lower_bound_pct.value, 100);
    assert.equal(r.max_rated_children.value, 3);
    assert.equal(r.child_age_limit.value, 21);
  }
});

test('2026 applicable percentage: worked example of domain.md §1.4', () => {
  const income = 40000;
  const fpl = povertyGuideline(r2026, 'TX', 1);
  const pct = Math.floor((income / fpl) * 100);
  assert.equal(pct, 255);
  const ap = applicablePercentage(r2026, pct);
  assert.equal(ap, 8.59);
  assert.equal(Math.round((income * (ap ?? 0)) / 100), 3436);
});

test('2026 applicable percentage: band edges of Rev. Proc. 2025-25', () => {
  const cases: [number, number | null][] = [
    [50, 2.1],
    [100, 2.1],
    [132, 2.1],
    [133, 3.14],
    [150, 4.19],
    [200, 6.6],
    [250, 8.44],
    [299, 9.93],
    [300, 9.96],
    [400, 9.96],
    [401, null],
    [500, null],
  ];
  for (const [pct, expected] of cases) assert.equal(applicablePercentage(r2026, pct), expected, `${pct} %FPL`);
});

test('2025 applicable percentage: enhanced table without a cliff', () => {
  const cases: [number, number][] = [
    [100, 0],
    [149, 0],
    [150, 0],
    [175, 1],
    [200, 2],
    [250, 4],
    [300, 6],
    [350, 7.25],
    // 6 + 99/100 × 2.5 = 8.475 exactly: a half-way case that float error must not round down.
    [399, 8.48],
    [400, 8.5],
    [401, 8.5],
    [1000, 8.5],
  ];
  for (const [pct, expected] of cases) assert.equal(applicablePercentage(r2025, pct), expected, `${pct} %FPL`);
});

test('age curves: spot values from domain.md §3.2', () => {
  const factor = (r: TaxYearRules, state: string, age: number): number => ageCurveFor(r, state).factors[ageBand(age)];
  for (const r of [r2025, r2026]) {
    assert.equal(factor(r, 'TX', 0), 0.765);
    assert.equal(factor(r, 'TX', 15), 0.833);
    assert.equal(factor(r, 'TX', 21), 1.0);
    assert.equal(factor(r, 'TX', 40), 1.278);
    assert.equal(factor(r, 'TX', 64), 3.0);
    assert.equal(factor(r, 'TX', 65), 3.0);
    assert.equal(factor(r, 'UT', 59), 3.0);
    assert.equal(factor(r, 'UT', 40), 1.479);
    assert.equal(factor(r, 'MA', 10), 0.751);
    assert.equal(factor(r, 'MA', 14), 0.751);
    assert.equal(factor(r, 'MA', 40), 1.393);
    assert.equal(factor(r, 'MA', 64), 2.365);
    assert.equal(factor(r, 'DC', 21), 0.727);
    assert.equal(factor(r, 'DC', 64), 2.181);
    assert.equal(factor(r, 'MN', 20), 0.89);
    assert.equal(factor(r, 'AL', 20), 0.635);
    assert.equal(factor(r, 'NY', 20), 0.412);
    assert.equal(factor(r, 'NY', 21), 1.0);
    assert.equal(factor(r, 'VT', 5), 1.0);
    assert.equal(ageCurveFor(r, 'ut'), r.age_curves.states.UT);
    assert.equal(ageCurveFor(r, 'TX'), r.age_curves.default);
    assert.deepEqual(Object.keys(r.age_curves.states).sort(), ['AL', 'DC', 'MA', 'MN', 'MS', 'NY', 'OR', 'UT', 'VT']);
  }
});

test('age curves: 64+/21 is at most 3.0 on every curve (45 CFR 147.102)', () => {
  for (const r of [r2025, r2026]) {
    const curves = { default: r.age_curves.default, ...r.age_curves.states };
    for (const [name, curve] of Object.entries(curves)) {
      const ratio = curve.factors[ageBand(64)] / curve.factors[ageBand(21)];
      // DC is exactly 2.181 / 0.727 = 3, which floating point may put a hair above.
      assert.ok(ratio <= 3 + 1e-9, `${r.tax_year} ${name}: ${ratio}`);
    }
  }
});

test('family tiers: NY and VT (domain.md §3.3)', () => {
  for (const r of [r2025, r2026]) {
    const { NY, VT } = r.family_tiers;
    assert.deepEqual(
      [NY.one_adult, NY.two_adults, NY.one_adult_and_children, NY.two_adults_and_children, NY.child_only],
      [1, 2, 1.7, 2.85, 0.412],
    );
    assert.deepEqual(
      [VT.one_adult, VT.two_adults, VT.one_adult_and_children, VT.two_adults_and_children, VT.child_only],
      [1, 2, 1.93, 2.81, null],
    );
  }
});

test('every value carries sources and a confidence tag', () => {
  const refs = (r: TaxYearRules): [string, SourceRef][] => [
    ['fpl', r.fpl],
    ['applicable_percentage', r.applicable_percentage],
    ['lower_bound_pct', r.lower_bound_pct],
    ['cap_at_400_fpl', r.cap_at_400_fpl],
    ['required_contribution_pct', r.required_contribution_pct],
    ['max_rated_children', r.max_rated_children],
    ['child_age_limit', r.child_age_limit],
    ['moop_limit', r.moop_limit],
    ['age_curves.default', r.age_curves.default],
    ...Object.entries(r.age_curves.states).map(([k, v]): [string, SourceRef] => [`age_curves.states.${k}`, v]),
    ...Object.entries(r.family_tiers).map(([k, v]): [string, SourceRef] => [`family_tiers.${k}`, v]),
  ];
  for (const r of [r2025, r2026]) {
    for (const [name, ref] of refs(r)) {
      assert.ok(ref.sources.length > 0, `${r.tax_year} ${name}`);
      assert.ok(
        ref.sources.every((s) => /^https?:\/\//.test(s)),
        `${r.tax_year} ${name}`,
      );
    }
  }
  assert.ok(r2026.applicable_percentage.sources.includes('https://www.irs.gov/pub/irs-drop/rp-25-25.pdf'));
  assert.ok(r2026.fpl.sources.includes('https://www.govinfo.gov/content/pkg/FR-2025-01-17/pdf/2025-01377.pdf'));
  assert.ok(r2026.max_rated_children.sources.includes('https://www.law.cornell.edu/cfr/text/45/147.102'));
});

test('validator rejects broken tables with a message naming file and field', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rules-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const shipped = fileURLToPath(new URL('../../data/rules/2026.json', import.meta.url));
  const good = JSON.parse(readFileSync(shipped, 'utf8')) as Record<string, unknown> & {
    age_curves: { default: { factors: number[] } };
    required_contribution_pct: Record<string, unknown>;
    applicable_percentage: { bands: { from_pct: number }[] };
  };
  const write = (value: unknown): void => writeFileSync(join(dir, '2026.json'), JSON.stringify(value));

  // Sanity: an unmodified copy loads from the temporary directory.
  write(good);
  assert.equal(loadRules(2026, dir).tax_year, 2026);
  assert.deepEqual(availableRuleYears(dir), [2026]);

  const short = structuredClone(good);
  short.age_curves.default.factors = short.age_curves.default.factors.slice(0, 50);
  write(short);
  assert.throws(() => loadRules(2026, dir), {
    message: 'rules 2026.json: age_curves.default.factors must have 51 entries',
  });

  const unsourced = structuredClone(good);
  delete unsourced.required_contribution_pct.sources;
  write(unsourced);
  assert.throws(() => loadRules(2026, dir), {
    message: 'rules 2026.json: required_contribution_pct.sources must be a non-empty array of http(s) URLs',
  });

  const emptySources = structuredClone(good);
  emptySources.required_contribution_pct.sources = [];
  write(emptySources);
  assert.throws(() => loadRules(2026, dir), /required_contribution_pct\.sources/);

  const badConfidence = structuredClone(good);
  badConfidence.required_contribution_pct.confidence = 'high';
  write(badConfidence);
  assert.throws(() => loadRules(2026, dir), /required_contribution_pct\.confidence must be one of/);

  const gap = structuredClone(good);
  gap.applicable_percentage.bands[2].from_pct = 151;
  write(gap);
  assert.throws(() => loadRules(2026, dir), /applicable_percentage\.bands\.2\.from_pct .*contiguous/);

  const dip = structuredClone(good);
  dip.age_curves.default.factors[30] = 0.5;
  write(dip);
  assert.throws(() => loadRules(2026, dir), /age_curves\.default\.factors\.30 must not be below/);

  assert.throws(() => loadRules(2031, dir), /rules 2031\.json: cannot read rule table \(available years: 2026\)/);
});
