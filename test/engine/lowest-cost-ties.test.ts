/**
 * @module Ties in the lowest-cost ranking (src/engine/lowest-cost-plans.ts): plans with the same
 * household total rank by plan id, whatever their order in the location's list. Real lists rarely hold
 * equal totals at the top, so a list is made here: the columns the ranking and the rater read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';
import { METAL_CODES, PLAN_FLAG } from '../../src/engine/build-format.ts';
import type { Dataset, ZipLocation } from '../../src/engine/dataset.ts';
import { rankLowestCost } from '../../src/engine/lowest-cost-plans.ts';
import { loadRules } from '../../src/engine/rules.ts';

/** One list of plans, each with one premium at every age. */
function listOf(plans: ReadonlyArray<{ id: string; metal: 'silver' | 'bronze' | 'gold'; cents: number }>): Dataset {
  const n = plans.length;
  const entryCents = new Uint32Array(AGE_BAND_COUNT * n);
  for (let b = 0; b < AGE_BAND_COUNT; b++) for (let e = 0; e < n; e++) entryCents[b * n + e] = plans[e]!.cents;
  const columns = {
    listStart: Uint32Array.of(0, n),
    entryPlan: Uint32Array.from(plans, (_, i) => i),
    entryCents,
    entryCount: n,
    entryMetal: Uint8Array.from(plans, (p) => METAL_CODES.indexOf(p.metal)),
    entryType: new Uint8Array(n),
    entryFlags: new Uint8Array(n).fill(PLAN_FLAG.onExchange),
    nameKey: new Uint32Array(n),
  };
  const made: Partial<Dataset> = {
    columns,
    listSize: () => n,
    listPlan: (_list, pos) => pos,
    plan: (i) =>
      ({ standardComponentId: plans[i]!.id, metal: plans[i]!.metal, flags: PLAN_FLAG.onExchange }) as ReturnType<Dataset['plan']>,
  };
  return made as Dataset;
}

const TX: ZipLocation = {
  zip: '77002',
  state: 'TX',
  countyFips: '48201',
  countyName: 'Harris',
  ratingArea: 1,
  areaIndex: 0,
  residentialShare: 1,
  listId: 0,
  primary: true,
};

type Plan = Parameters<typeof listOf>[0][number];
/** Each case: a list, then the first silver, second silver and lowest bronze expected as [id, list position, total]. */
const CASES: ReadonlyArray<{
  readonly name: string;
  readonly plans: readonly Plan[];
  readonly want: ReadonlyArray<[string, number, number]>;
}> = [
  {
    name: 'equal totals rank by plan id, whatever the list order: the two lowest silver plans and the lowest bronze',
    plans: [
      { id: '10000TX0000003', metal: 'silver', cents: 40_000 },
      { id: '10000TX0000009', metal: 'bronze', cents: 25_000 },
      { id: '10000TX0000002', metal: 'silver', cents: 40_000 },
      { id: '10000TX0000007', metal: 'gold', cents: 10_000 },
      { id: '10000TX0000001', metal: 'silver', cents: 40_000 },
      { id: '10000TX0000008', metal: 'bronze', cents: 25_000 },
    ],
    want: [
      ['10000TX0000001', 4, 40_000],
      ['10000TX0000002', 2, 40_000],
      ['10000TX0000008', 5, 25_000],
    ],
  },
  {
    name: 'a lower total wins over a lower plan id, and a tie for second place keeps the lower id',
    plans: [
      { id: '10000TX0000001', metal: 'silver', cents: 41_000 },
      { id: '10000TX0000005', metal: 'silver', cents: 39_000 },
      { id: '10000TX0000004', metal: 'silver', cents: 41_000 },
      { id: '10000TX0000002', metal: 'bronze', cents: 26_000 },
      { id: '10000TX0000006', metal: 'bronze', cents: 25_000 },
    ],
    want: [
      ['10000TX0000005', 1, 39_000],
      ['10000TX0000001', 0, 41_000],
      ['10000TX0000006', 4, 25_000],
    ],
  },
];

for (const c of CASES) {
  test(c.name, () => {
    const r = rankLowestCost(listOf(c.plans), loadRules(2025), TX, [40]);
    assert.ok(r !== null);
    const got = [r.first, r.second, r.bronze].map((p) => (p === null ? null : [p.id, p.pos, p.totalCents]));
    assert.deepEqual(got, c.want);
  });
}
