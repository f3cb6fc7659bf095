/**
 * @module What a plan-shopping page draws its filters from (the CMS Marketplace API's
 * `/plans/search/stats`): for one search's location, age and filters, ignoring paging and sort, the
 * number of matching plans per metal level, plan type, issuer and HSA eligibility, and the range of their
 * premiums and deductibles. Plans are matched by the search's own {@link Matcher}, so every facet's
 * counts add up to the `total` of the same search.
 */
import { METAL_CODES, PLAN_FLAG, PLAN_TYPE_CODES } from './build-format.ts';
import type { Dataset } from './dataset.ts';
import type { MetalLevel, PlanType } from './plan-record.ts';
import { Matcher, type SearchQuery } from './search.ts';

export interface FacetCount<V> {
  readonly value: V;
  readonly count: number;
}

export interface SearchStats {
  readonly total: number;
  /** Values with at least one plan, in the order of the codes (metal levels, plan types). */
  readonly metalLevels: readonly FacetCount<MetalLevel>[];
  readonly planTypes: readonly FacetCount<PlanType>[];
  /** Issuer names, most plans first, then by name. */
  readonly issuers: readonly FacetCount<string>[];
  /** true, then false; values with no plan left out. */
  readonly hsaEligible: readonly FacetCount<boolean>[];
  /** Monthly premiums for the search's age or household, cents; null when nothing matches. */
  readonly premiumCents: { readonly min: number; readonly max: number } | null;
  /** Individual deductibles shown (a silver plan's CSR variant's under cost-sharing reductions), dollars; null when no matching plan has one. */
  readonly deductible: { readonly min: number; readonly max: number } | null;
}

/** The query of a search without its page and order. */
export type StatsQuery = Pick<SearchQuery, 'listId' | 'age' | 'household' | 'filters' | 'csr'>;

export function searchStats(ds: Dataset, q: StatsQuery): SearchStats {
  const match = new Matcher(ds, { ...q, sortBy: 'premium', descending: false, pageSize: 1, page: 1 });
  const { entryMetal, entryType, entryFlags, entryPlan } = ds.columns;
  const size = ds.listSize(q.listId);
  const metals = new Array<number>(METAL_CODES.length).fill(0);
  const types = new Array<number>(PLAN_TYPE_CODES.length).fill(0);
  const issuers = new Map<string, number>();
  let hsaYes = 0;
  let total = 0;
  let minCents = Number.POSITIVE_INFINITY;
  let maxCents = 0;
  let minDeductible = Number.POSITIVE_INFINITY;
  let maxDeductible = Number.NEGATIVE_INFINITY;
  for (let pos = 0; pos < size; pos++) {
    const cents = match.cents(pos);
    if (cents === 0) continue;
    const e = match.base + pos;
    total++;
    metals[entryMetal[e]!]!++;
    types[entryType[e]!]!++;
    if ((entryFlags[e]! & PLAN_FLAG.hsaEligible) !== 0) hsaYes++;
    const plan = ds.plan(entryPlan[e]!);
    issuers.set(plan.issuer, (issuers.get(plan.issuer) ?? 0) + 1);
    if (cents < minCents) minCents = cents;
    if (cents > maxCents) maxCents = cents;
    const d = match.deductible(pos);
    if (d !== null) {
      if (d < minDeductible) minDeductible = d;
      if (d > maxDeductible) maxDeductible = d;
    }
  }
  const counted = <V>(codes: readonly V[], counts: readonly number[]): FacetCount<V>[] =>
    codes.flatMap((value, i) => (counts[i]! > 0 ? [{ value, count: counts[i]! }] : []));
  return {
    total,
    metalLevels: counted(METAL_CODES, metals),
    planTypes: counted(PLAN_TYPE_CODES, types),
    issuers: [...issuers]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)),
    hsaEligible: counted([true, false], [hsaYes, total - hsaYes]),
    premiumCents: total === 0 ? null : { min: minCents, max: maxCents },
    deductible: minDeductible === Number.POSITIVE_INFINITY ? null : { min: minDeductible, max: maxDeductible },
  };
}
