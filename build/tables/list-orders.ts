/**
 * @module The entries of every plan list and their sort orders: by name, deductible, maximum
 * out-of-pocket, and premium per age band (premium orders that repeat across bands or lists are
 * stored once in a pool). Ties break by standard component id, so a page is the same on every build.
 */
import { AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';
import { NULL_MONEY } from '../../src/engine/build-format.ts';
import type { PlanList } from './location-lists.ts';
import { NAME_COLLATOR } from './name-collator.ts';
import type { PlanColumns } from './plan-columns.ts';
import type { PremiumPairs } from './premium-pairs.ts';

export interface ListOrders {
  readonly listStart: Uint32Array;
  readonly listArea: Uint16Array;
  readonly entryPlan: Uint32Array;
  readonly entryPair: Uint32Array;
  readonly orderName: Uint16Array;
  readonly orderDeductible: Uint16Array;
  readonly orderMoop: Uint16Array;
  /** List `l`, band `b`: where its premium order starts in the pool. */
  readonly premiumRef: Uint32Array;
  readonly premiumPool: Uint16Array;
}

/** Money ascending, missing values last. */
const byMoney =
  (col: Float64Array) =>
  (x: number, y: number): number => {
    const a = col[x]!;
    const b = col[y]!;
    if (a === NULL_MONEY || b === NULL_MONEY) return (a === NULL_MONEY ? 1 : 0) - (b === NULL_MONEY ? 1 : 0);
    return a - b;
  };

export function listOrders(lists: readonly PlanList[], plans: PlanColumns, pairs: PremiumPairs): ListOrders {
  const nL = lists.length;
  const listStart = new Uint32Array(nL + 1);
  const listArea = new Uint16Array(nL);
  let nE = 0;
  for (let l = 0; l < nL; l++) {
    listStart[l] = nE;
    listArea[l] = lists[l]!.area;
    nE += lists[l]!.plans.length;
  }
  listStart[nL] = nE;
  const o = {
    entryPlan: new Uint32Array(nE),
    entryPair: new Uint32Array(nE),
    orderName: new Uint16Array(nE),
    orderDeductible: new Uint16Array(nE),
    orderMoop: new Uint16Array(nE),
    premiumRef: new Uint32Array(nL * AGE_BAND_COUNT),
  };
  const pool: number[] = [];
  const { scids } = plans;
  const tie = (x: number, y: number): number => (scids[x]! < scids[y]! ? -1 : scids[x]! > scids[y]! ? 1 : 0);
  for (let l = 0; l < nL; l++) {
    const { area, plans: members } = lists[l]!;
    const base = listStart[l]!;
    members.forEach((p, k) => {
      o.entryPlan[base + k] = p;
      o.entryPair[base + k] = pairs.row(p, area)!;
    });
    const positions = members.map((_, k) => k);
    const write = (target: Uint16Array, cmp: (x: number, y: number) => number): void => {
      const sorted = [...positions].sort((i, j) => cmp(members[i]!, members[j]!) || tie(members[i]!, members[j]!));
      for (let k = 0; k < sorted.length; k++) target[base + k] = sorted[k]!;
    };
    write(o.orderName, (x, y) => NAME_COLLATOR.compare(plans.names[x]!, plans.names[y]!));
    write(o.orderDeductible, byMoney(plans.deductible));
    write(o.orderMoop, byMoney(plans.moop));
    const seen = new Map<string, number>();
    for (let b = 0; b < AGE_BAND_COUNT; b++) {
      const premium = (pos: number): number => {
        const c = pairs.cents[o.entryPair[base + pos]! * AGE_BAND_COUNT + b]!;
        return c === 0 ? Number.MAX_SAFE_INTEGER : c; // not sold at this age: last
      };
      const sorted = [...positions].sort((i, j) => premium(i) - premium(j) || tie(members[i]!, members[j]!));
      const key = sorted.join(',');
      let ref = seen.get(key);
      if (ref === undefined) {
        ref = pool.length;
        for (const pos of sorted) pool.push(pos);
        seen.set(key, ref);
      }
      o.premiumRef[l * AGE_BAND_COUNT + b] = ref;
    }
  }
  return { listStart, listArea, ...o, premiumPool: Uint16Array.from(pool) };
}
