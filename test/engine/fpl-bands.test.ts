/**
 * The poverty-level figures of an estimate as Form 8962 and the CSR rule read them, at every band edge
 * (2026 rules, 2025 guideline $15,650 for one person): the percentage the calculation used (line 5,
 * decimals dropped, 401 above 400 %), the band in words with its lower end included, and the CSR range
 * with its upper end included, so that at exactly 150 % the two do not contradict each other.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Dataset, openCurrentDataset } from '../../src/engine/dataset.ts';
import { loadRules } from '../../src/engine/rules.ts';
import { estimateAptc } from '../../src/engine/subsidy.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

let dir: string;
let ds: Dataset;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-fpl-bands-'));
  ds = openCurrentDataset(await buildFixture(dir), 2025);
});
after(() => {
  ds?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const FPL = 15_650;

describe('band and percentage fields at the band edges', () => {
  const cases: ReadonlyArray<[pct: number, line5: number, band: string | null, csr: number | null, csrBand: string | null]> = [
    [100, 100, 'under 133%', 94, '100% to 150%'],
    [150, 150, '150% to under 200%', 94, '100% to 150%'],
    [151, 151, '150% to under 200%', 87, 'over 150% to 200%'],
    [200, 200, '200% to under 250%', 87, 'over 150% to 200%'],
    [250, 250, '250% to under 300%', 73, 'over 200% to 250%'],
    [300, 300, '300% to 400%', null, null],
    [400, 400, '300% to 400%', null, null],
    [401, 401, null, null, null],
  ];
  for (const [pct, line5, band, csr, csrBand] of cases) {
    test(`2026 at ${pct} % of the poverty line: line 5 reads ${line5}, band ${band ?? 'none'}, CSR ${csr ?? 'none'}`, () => {
      const income = (FPL * pct) / 100;
      const r = estimateAptc(ds, loadRules(2026), ds.resolveZip(FIXTURE_ZIPS.harris)![0]!, { income, householdSize: 1, ages: [40] });
      assert.equal(r.fpl_percentage_truncated, line5);
      assert.equal(r.band_label, band);
      assert.equal(r.csr_level, csr);
      assert.equal(r.csr_band_label, csrBand);
      assert.equal(r.eligible, pct <= 400);
    });
  }

  test('a year without the cliff names its top band "400% and over", never "400-%"', () => {
    const r = estimateAptc(ds, loadRules(2025), ds.resolveZip(FIXTURE_ZIPS.harris)![0]!, {
      income: (15_060 * 401) / 100,
      householdSize: 1,
      ages: [40],
    });
    assert.equal(r.eligible, true);
    assert.equal(r.fpl_percentage_truncated, 401);
    assert.equal(r.band_label, '400% and over');
  });

  test('the exact ratio is kept apart from the percentage the calculation used', () => {
    // 35,253 / 15,650 = 225.26 %: Form 8962 line 5 enters 225, and the band and applicable percentage follow 225.
    const r = estimateAptc(ds, loadRules(2026), ds.resolveZip(FIXTURE_ZIPS.harris)![0]!, { income: 35_253, householdSize: 1, ages: [40] });
    assert.equal(r.fpl_percentage, 225.26);
    assert.equal(r.fpl_percentage_truncated, 225);
    // 6.60 + (25 / 50) × (8.44 − 6.60) = 7.52
    assert.equal(r.applicable_percentage, 7.52);
  });
});
