/**
 * @module Premium pairs: one row per (plan, rating area) the rates price, in plan then area order,
 * with the monthly premium in cents per age band.
 */
import { AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';
import { pairKey } from '../../src/engine/build-format.ts';
import type { RateTable } from '../puf/rates.ts';
import type { AreaIndex } from './area-index.ts';
import type { PlanColumns } from './plan-columns.ts';

export interface PremiumPairs {
  readonly plan: Uint32Array;
  readonly area: Uint16Array;
  /** Row `r`, band `b`: `cents[r * AGE_BAND_COUNT + b]`. */
  readonly cents: Uint32Array;
  /** The row of (plan, area), or undefined when the rates do not price it. */
  row(plan: number, area: number): number | undefined;
  readonly rateRows: number;
}

export function premiumPairs(plans: PlanColumns, rateTable: RateTable, areas: AreaIndex): PremiumPairs {
  const pairPlan: number[] = [];
  const pairArea: number[] = [];
  const rows = new Map<number, number>();
  const chunks: Uint32Array[] = [];
  let rateRows = 0;
  plans.scids.forEach((scid, p) => {
    const byArea = rateTable.rates.get(scid);
    if (byArea === undefined) return;
    const state = plans.primary(scid).state;
    for (const n of [...byArea.keys()].sort((x, y) => x - y)) {
      const ai = areas.add(state, n);
      rows.set(pairKey(p, ai), pairPlan.length);
      pairPlan.push(p);
      pairArea.push(ai);
      chunks.push(byArea.get(n)!);
      rateRows += AGE_BAND_COUNT;
    }
  });
  const cents = new Uint32Array(pairPlan.length * AGE_BAND_COUNT);
  for (const [i, c] of chunks.entries()) cents.set(c, i * AGE_BAND_COUNT);
  return {
    plan: Uint32Array.from(pairPlan),
    area: Uint16Array.from(pairArea),
    cents,
    row: (plan, area) => rows.get(pairKey(plan, area)),
    rateRows,
  };
}
