/**
 * The build diff on two fixture builds whose differences are known (test/helpers/fixture-two-builds.ts).
 * Every expected figure below is worked out by hand from the fixture inputs, not by the code under test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffBuilds, percentile, type BuildDiff } from '../../src/engine/build-diff.ts';
import { openDataset, type Dataset } from '../../src/engine/dataset.ts';
import { renderBuildDiff } from '../../src/cli/build-diff-text.ts';
import { buildTwoFixtures, MODIFIED } from '../helpers/fixture-two-builds.ts';

let scratch: string;
let a: Dataset;
let b: Dataset;
let d: BuildDiff;

/** Federal default age curve (45 CFR 147.102): 0–14 → 0.765, 40 → 1.278; benchmarks are 0–14 normalised. */
const AGE40 = 1.278 / 0.765;
const cents = (x: number): number => Math.round(x * 100) / 100;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hpd-diff-'));
  const t = await buildTwoFixtures(scratch);
  a = openDataset(join(t.root, '2025', t.hashA));
  b = openDataset(join(t.root, '2025', t.hashB));
  d = diffBuilds(a, b);
});
after(() => {
  a?.close();
  b?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('diffBuilds on the fixture and its modified copy', () => {
  test('plans: one removed, one added, one changed deductible, three AK plans repriced', () => {
    assert.equal(d.cross_year, false);
    // 13 plans in A (FIXTURE_PLANS); B drops one and adds one.
    assert.deepEqual(d.plans.total, {
      before: 13,
      after: 13,
      added: 1,
      removed: 1,
      changed: 4,
      unchanged: 8,
      variants_before: 46,
      variants_after: 46,
    });
    assert.deepEqual(d.plans.added, [MODIFIED.added]);
    assert.deepEqual(d.plans.removed, [MODIFIED.removed]);
    assert.deepEqual(
      d.plans.changed.map((c) => [c.id, c.fields]),
      [
        [MODIFIED.deductibleChanged, ['deductible']],
        ['44444AK0040001', ['premium']],
        ['44444AK0040002', ['premium']],
        ['44444AK0040003', ['premium']],
      ],
    );
    assert.deepEqual(d.plans.changed_fields, { deductible: 1, premium: 3 });
    // Variants: TX = 5 on-exchange silvers × 5 (-01 -00 -04 -05 -06) + 4 other on-exchange × 2 + 1 off-exchange-only = 34;
    // the removed catastrophic and the added gold have two each. AK = 2 × 5 + 2 = 12.
    assert.deepEqual(
      d.plans.by_state.map((s) => [s.state, s.before, s.after, s.added, s.removed, s.changed, s.variants_before, s.variants_after]),
      [
        ['AK', 3, 3, 0, 0, 3, 12, 12],
        ['TX', 10, 10, 1, 1, 1, 34, 34],
      ],
    );
    assert.deepEqual(
      d.plans.by_issuer.map((s) => [s.state, s.issuer_id, s.issuer, s.before, s.after, s.added, s.removed, s.changed]),
      [
        ['AK', '44444', 'Northern Lights Health', 3, 3, 0, 0, 3],
        ['TX', '11111', 'Lone Star Health', 5, 4, 0, 1, 1],
        ['TX', '22222', 'Gulf Coast Care', 3, 4, 1, 0, 0],
        ['TX', '33333', 'Downtown Health', 2, 2, 0, 0, 0],
      ],
    );
  });

  test('premium distribution at 40: only AK area 1 pairs rose, by 10 %', () => {
    const at40 = new Map(d.premiums.distributions.filter((x) => x.age === 40).map((x) => [x.metal, x]));
    // Pairs priced in both builds (plan × rating area; the child-only silver is not sold at 40):
    // silver  TX 11111-1 (10,26), 11111-2 (10,26), 22222-1 (10,26,27), 33333-1 (10); AK 44444-1, -2 (1,2) = 12, two at +10 %
    // bronze  TX 11111-3 (10,26); AK 44444-3 (1,2) = 4, one at +10 %
    // expanded bronze 22222-2 (10,26,27) = 3; gold 11111-4 (10,26) = 2 (the added gold is in B only);
    // platinum 33333-2 (10) = 1; catastrophic: the only one was removed, so none.
    assert.deepEqual([...at40.keys()].sort(), ['bronze', 'expanded bronze', 'gold', 'platinum', 'silver']);
    const counts = [...at40.values()].map((x) => [x.metal, x.count, x.increased, x.decreased]);
    assert.deepEqual(counts.sort(), [
      ['bronze', 4, 1, 0],
      ['expanded bronze', 3, 0, 0],
      ['gold', 2, 0, 0],
      ['platinum', 1, 0, 0],
      ['silver', 12, 2, 0],
    ]);
    // Type-7 percentiles: silver sorted = ten 0s then two 0.10: p90 at rank 0.9 × 11 = 9.9 → 0 + 0.9 × 0.10 = 0.09.
    const silver = at40.get('silver')!;
    assert.equal(silver.median, 0);
    assert.equal(silver.p10, 0);
    assert.ok(Math.abs(silver.p90! - 0.09) < 2e-4, String(silver.p90));
    // Bronze sorted = 0, 0, 0, 0.10: p90 at rank 2.7 → 0.7 × 0.10 = 0.07; median at 1.5 → 0.
    const bronze = at40.get('bronze')!;
    assert.equal(bronze.median, 0);
    assert.ok(Math.abs(bronze.p90! - 0.07) < 2e-4, String(bronze.p90));
    for (const m of ['expanded bronze', 'gold', 'platinum'] as const)
      assert.deepEqual([at40.get(m)!.p10, at40.get(m)!.median, at40.get(m)!.p90], [0, 0, 0]);
    assert.deepEqual(d.premiums.ages, [21, 40, 64]);
  });

  test('ZIPs and counties whose rating areas changed', () => {
    assert.deepEqual(d.zips.changed, [
      { zip: '77477', state: 'TX', before: ['48157:26', '48201:10'], after: ['48157:26'] },
      { zip: '96813', state: 'HI', before: ['15003:1'], after: ['15003:2'] },
    ]);
    assert.deepEqual(d.counties.changed, [{ fips: '15003', state: 'HI', name: 'Honolulu County', before: [1], after: [2] }]);
    assert.equal(d.zips.before, 8); // the eleven HUD ZIPs less PR and the duplicate 77477 and 77336 rows
  });

  test('SLCSP at 40 per rating area: AK 1 +10 %, HI moved from area 1 to 2, the rest unchanged', () => {
    const ak1 = { before: cents(606 * AGE40), after: cents(666.6 * AGE40) }; // 1012.38 → 1113.61
    const hi = cents(350 * AGE40); // benchmark only; area 2 has none in the table, so HI's median (its only one) is used
    const byArea = new Map(d.slcsp.areas.map((s) => [`${s.state}:${s.rating_area}`, s]));
    assert.deepEqual([...byArea.keys()], ['AK:1', 'AK:2', 'HI:1', 'HI:2', 'TX:10', 'TX:26', 'TX:27']);
    const s = byArea.get('AK:1')!;
    assert.deepEqual([s.before, s.after, s.change], [ak1.before, ak1.after, cents(ak1.after - ak1.before)]);
    assert.ok(Math.abs(s.relative! - 0.1) < 1e-4);
    assert.deepEqual([byArea.get('HI:1')!.before, byArea.get('HI:1')!.after, byArea.get('HI:1')!.relative], [hi, null, null]);
    assert.deepEqual([byArea.get('HI:2')!.before, byArea.get('HI:2')!.after], [null, hi]);
    // TX: the second-lowest eligible silver equals the benchmark by construction.
    for (const [k, bench] of [
      ['TX:10', 308],
      ['TX:26', 290],
      ['TX:27', 300],
    ] as const)
      assert.deepEqual([byArea.get(k)!.before, byArea.get(k)!.change], [cents(bench * AGE40), 0]);
    assert.equal(d.slcsp.changed, 3);
    assert.equal(d.slcsp.unchanged, 4);
  });

  test('a build against itself: nothing changed', () => {
    const self = diffBuilds(a, a);
    assert.deepEqual(
      [
        self.plans.total.added,
        self.plans.total.removed,
        self.plans.total.changed,
        self.zips.changed.length,
        self.counties.changed.length,
        self.slcsp.changed,
      ],
      [0, 0, 0, 0, 0, 0],
    );
    assert.ok(self.premiums.distributions.every((x) => x.increased === 0 && x.decreased === 0 && x.p90 === 0));
  });

  test('the text rendering names the changes', () => {
    const text = renderBuildDiff(d);
    assert.match(text, /^diff 2025\/[0-9a-f]{12} \(built .*\) -> 2025\/[0-9a-f]{12}/);
    assert.match(
      text,
      /plans \(standard component ids\): 13 -> 13: 1 added, 1 removed, 4 changed \(premium 3, deductible 1\), 8 unchanged; variants 46 -> 46/,
    );
    assert.match(text, /\n {4}TX 11111 Lone Star Health {2}5 -> 4: \+0 -1 ~1\n/);
    assert.match(text, /\n {2}silver +12 +2 +0 +\+0\.00% +\+0\.00% +\+9\.0\d%\n/);
    assert.match(text, /\n {2}77477 TX: 48157:26 48201:10 -> 48157:26\n/);
    assert.match(text, /\n {2}15003 Honolulu County, HI: 1 -> 2\n/);
    assert.match(text, /\n {2}AK 1: \$1012\.38 -> \$1113\.61 \(\+101\.23, \+\d+\.\d\d%\)\n/);
    assert.doesNotMatch(text, /note: builds of two plan years/);
  });
});

test('percentile: linear interpolation between closest ranks', () => {
  assert.equal(percentile([], 0.5), null);
  assert.equal(percentile([7], 0.9), 7);
  assert.equal(percentile([1, 2, 3, 4], 0.5), 2.5); // rank 1.5
  assert.ok(Math.abs(percentile([10, 20, 30, 40, 50], 0.1)! - 14) < 1e-12); // rank 0.4 → 10 + 0.4 × 10
  assert.ok(Math.abs(percentile([10, 20, 30, 40, 50], 0.9)! - 46) < 1e-12); // rank 3.6 → 40 + 0.6 × 10
});
