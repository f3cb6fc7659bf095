/**
 * @module The lowest-cost plans of a location for a household, in one pass: the two lowest silver plans
 * and the lowest bronze plan. The second silver plan is the APTC benchmark (SLCSP, domain.md §5). The
 * first is the lowest-cost silver plan (LCSP): the ICHRA affordability test prices it for the employee
 * alone (26 CFR 1.36B-2(c)(5)), and the APTC estimate reports it for the household beside the lowest-cost
 * bronze plan (LCBP; expanded bronze plans are bronze plans, 45 CFR 156.140(c)).
 *
 * All of them rank plans the same way. A plan qualifies when it is of the metal level, sold on the
 * exchange and able to cover the household ({@link HouseholdRater}); plans are ranked by the household's
 * total, ties broken by plan id.
 */
import type { Mutable } from './mutable.ts';
import { METAL_CODES, NO_LIST, PLAN_FLAG } from './build-format.ts';
import type { Dataset, ZipLocation } from './dataset.ts';
import { HouseholdRater } from './household-rater.ts';
import type { TaxYearRules } from './rules-types.ts';

const SILVER = METAL_CODES.indexOf('silver');
const BRONZE = METAL_CODES.indexOf('bronze');
const EXPANDED_BRONZE = METAL_CODES.indexOf('expanded bronze');

function idAt(ds: Dataset, listId: number, pos: number): string {
  return ds.plan(ds.listPlan(listId, pos)).standardComponentId;
}

/** Whether the plan at `pos` ranks before the one at `other` on a tie: the lower plan id. */
function idBefore(ds: Dataset, listId: number, pos: number, other: number): boolean {
  return idAt(ds, listId, pos) < idAt(ds, listId, other);
}

export interface RankedPlan {
  /** Position in the location's plan list. */
  readonly pos: number;
  /** Standard component id (no variant suffix). */
  readonly id: string;
  /** The household's monthly total, cents. */
  readonly totalCents: number;
}

export interface LowestCostRanking {
  readonly first: RankedPlan;
  /** null when the location offers one qualifying silver plan. */
  readonly second: RankedPlan | null;
  /** The lowest bronze or expanded bronze plan; null when the location offers none for the household. */
  readonly bronze: RankedPlan | null;
  /** The household's rater at the location, which priced the ranking (and prices any member breakdown of it). */
  readonly rater: HouseholdRater;
}

/**
 * The two lowest qualifying silver plans and the lowest bronze one, or null when the location lists no
 * silver plan; priced by a rater of its own, which the ranking carries.
 */
export function rankLowestCost(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]): LowestCostRanking | null {
  const rater = new HouseholdRater();
  // A record of its own: its plans are this ranking's alone.
  const r = rankLowestCostInto(ds, rules, location, ages, rater, new RankingRecord());
  return r === null ? null : { first: r.first, second: r.second, bronze: r.bronze, rater };
}

/** A ranking's plans in objects of its own, rewritten by each {@link rankLowestCostInto} into it. */
export class RankingRecord {
  readonly #first: Mutable<RankedPlan> = { pos: 0, id: '', totalCents: 0 };
  readonly #second: Mutable<RankedPlan> = { pos: 0, id: '', totalCents: 0 };
  readonly #bronze: Mutable<RankedPlan> = { pos: 0, id: '', totalCents: 0 };
  first: RankedPlan = this.#first;
  second: RankedPlan | null = null;
  bronze: RankedPlan | null = null;

  /** Sets the ranking; a negative position: no such plan. */
  set(
    first: number,
    firstId: string,
    firstTotal: number,
    second: number,
    secondId: string,
    secondTotal: number,
    bronze: number,
    bronzeId: string,
    bronzeTotal: number,
  ): this {
    this.first = place(this.#first, first, firstId, firstTotal);
    this.second = second < 0 ? null : place(this.#second, second, secondId, secondTotal);
    this.bronze = bronze < 0 ? null : place(this.#bronze, bronze, bronzeId, bronzeTotal);
    return this;
  }
}

function place(p: Mutable<RankedPlan>, pos: number, id: string, totalCents: number): RankedPlan {
  p.pos = pos;
  p.id = id;
  p.totalCents = totalCents;
  return p;
}

/**
 * {@link rankLowestCost} with `rater` (set for this household here) into `out`, or null when the
 * location lists no silver plan: the APTC benchmark ranks into its estimate record's.
 */
export function rankLowestCostInto(
  ds: Dataset,
  rules: TaxYearRules,
  location: ZipLocation,
  ages: readonly number[],
  rater: HouseholdRater,
  out: RankingRecord,
): RankingRecord | null {
  const listId = location.listId;
  if (listId === NO_LIST) return null;
  const size = ds.listSize(listId);
  rater.set(ds, rules, location, ages);
  // The scan keeps only the two lowest (total, plan id) pairs and allocates nothing per plan: it runs
  // over every silver plan of the location on every APTC request (and every search with an income).
  // It reads the list's columns; a plan's record (its id) is read only on a tie and for the winners.
  const { listStart, entryMetal, entryFlags } = ds.columns;
  const base = listStart[listId]!;
  let first = -1;
  let firstTotal = 0;
  let second = -1;
  let secondTotal = 0;
  let bronze = -1;
  let bronzeTotal = 0;
  for (let pos = 0; pos < size; pos++) {
    const metal = entryMetal[base + pos]!;
    const silver = metal === SILVER;
    if (!silver && metal !== BRONZE && metal !== EXPANDED_BRONZE) continue;
    if ((entryFlags[base + pos]! & PLAN_FLAG.onExchange) === 0) continue;
    const total = rater.total(pos);
    if (total === 0) continue;
    if (!silver) {
      if (bronze < 0 || total < bronzeTotal || (total === bronzeTotal && idBefore(ds, listId, pos, bronze))) {
        bronze = pos;
        bronzeTotal = total;
      }
      continue;
    }
    if (first < 0 || total < firstTotal || (total === firstTotal && idBefore(ds, listId, pos, first))) {
      second = first;
      secondTotal = firstTotal;
      first = pos;
      firstTotal = total;
    } else if (second < 0 || total < secondTotal || (total === secondTotal && idBefore(ds, listId, pos, second))) {
      second = pos;
      secondTotal = total;
    }
  }
  if (first < 0) return null;
  const firstId = idAt(ds, listId, first);
  const secondId = second < 0 ? '' : idAt(ds, listId, second);
  const bronzeId = bronze < 0 ? '' : idAt(ds, listId, bronze);
  return out.set(first, firstId, firstTotal, second, secondId, secondTotal, bronze, bronzeId, bronzeTotal);
}
