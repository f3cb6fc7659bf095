/**
 * @module A location's plan list priced for one household: the household's total at every
 * list position and the positions in order of that total, for a search to filter, sort and page by.
 *
 * The build stores premium orders per age only. Within a state every plan shares one age curve, so the
 * order by household total is nearly the order by the oldest member's premium; it differs only where
 * per-member rounding, child-only plans, ages a plan does not sell or family-tier amounts reorder plans.
 * So the stored order for that age is the seed and an insertion sort finishes it: linear on the nearly
 * sorted lists, exact on any. Ties break by plan index, which is plan-id order, as in the stored orders.
 */
import type { Dataset, ListOrderRef } from './dataset.ts';
import type { HouseholdRater } from './household-rater.ts';

/** Where the stored order seeding a fill is found (read within the fill). */
const SEED: ListOrderRef = { positions: new Uint16Array(0), start: 0, length: 0 };

export class HouseholdList {
  /** Household total in cents by list position; 0 where the plan cannot cover the household. */
  cents = new Int32Array(256);
  /** Positions by total ascending (ties by plan id), plans that cannot cover the household last. */
  order = new Uint16Array(256);
  size = 0;

  /** Prices the list of the rater's location into this (reused per thread) and returns it. */
  fill(ds: Dataset, rater: HouseholdRater): this {
    const listId = rater.location.listId;
    const size = ds.listSize(listId);
    if (size > this.cents.length) {
      this.cents = new Int32Array(size);
      this.order = new Uint16Array(size);
    }
    this.size = size;
    const cents = this.cents;
    for (let pos = 0; pos < size; pos++) cents[pos] = rater.total(pos);
    let oldest = 0;
    for (const a of rater.ages) if (a > oldest) oldest = a;
    const order = this.order;
    const seed = ds.listOrderInto(listId, 'premium', oldest, SEED);
    for (let i = 0; i < size; i++) order[i] = seed.positions[seed.start + i]!;
    const { entryPlan, listStart } = ds.columns;
    const base = listStart[listId]!;
    // Key: the total, "cannot cover" (0) after every price; then the plan index (plan-id order).
    // Inlined: the sort runs on every household search, over every plan of the list.
    for (let i = 1; i < size; i++) {
      const pos = order[i]!;
      const c = cents[pos]!;
      const key = c === 0 ? Number.POSITIVE_INFINITY : c;
      const plan = entryPlan[base + pos]!;
      let j = i - 1;
      for (; j >= 0; j--) {
        const other = order[j]!;
        const oc = cents[other]!;
        const okey = oc === 0 ? Number.POSITIVE_INFINITY : oc;
        if (okey < key || (okey === key && entryPlan[base + other]! < plan)) break;
        order[j + 1] = other;
      }
      order[j + 1] = pos;
    }
    return this;
  }

  /** The ascending order of the filled list (a view: valid until the next fill). */
  ascending(): Uint16Array {
    return this.order.subarray(0, this.size);
  }
}
