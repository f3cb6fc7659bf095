/**
 * @module Plan search over one location's pre-sorted plan list: filters, sort, offset and keyset pages.
 *
 * The build stores each location's plans already ordered by premium (per age band), deductible, MOOP
 * and name, ties by plan id; a query walks that order, so no request sorts. Descending order walks
 * runs of equal keys backwards but keeps each run in plan-id order, so the tie-break is the same in
 * both directions and pages never overlap or skip. Plans without a value for the key (a deductible
 * "Not Applicable") come last in either direction. The one case that needs a sort is a
 * cost-sharing-reduction view (silver plans shown as their CSR variant) ordered by deductible or MOOP,
 * whose values differ from the stored order; lists hold at most a few hundred plans.
 */
import { PLAN_FLAG } from './build-format.ts';
import type { Dataset, PlanSummaryFields, SortKey } from './dataset.ts';
import type { MetalLevel, PlanType } from './plan-record.ts';

export interface SearchFilters {
  readonly metalLevel?: MetalLevel;
  readonly planType?: PlanType;
  /** Lower-cased substring of the issuer name. */
  readonly issuer?: string;
  readonly hsaEligible?: boolean;
  /** Dollars, compared with the premium before credit. */
  readonly maxPremium?: number;
  /** Dollars, compared with the individual deductible shown (the CSR variant's when one is shown). */
  readonly maxDeductible?: number;
  /** Catastrophic plans are for applicants under 30, or on explicit request (hardship exemption). */
  readonly includeCatastrophic: boolean;
}

/** Values of the variant shown for a silver plan under cost-sharing reductions. */
export interface CsrOverride {
  readonly suffix: '04' | '05' | '06';
  /** Individual deductible and MOOP of that variant by plan index (null = not applicable). */
  readonly deductible: (planIndex: number) => number | null;
  readonly maxOutOfPocket: (planIndex: number) => number | null;
}

export interface SearchQuery {
  readonly listId: number;
  readonly age: number;
  readonly sortBy: SortKey;
  readonly descending: boolean;
  readonly filters: SearchFilters;
  readonly csr: CsrOverride | null;
  readonly pageSize: number;
  /** 1-based page (offset mode); ignored when `afterId` is set. */
  readonly page: number;
  /** Keyset mode: continue after the plan with this standard component id. */
  readonly afterId?: string;
}

export interface SearchRow {
  readonly planIndex: number;
  readonly position: number;
  readonly premiumCents: number;
  /** '01', or the CSR suffix shown for a silver plan. */
  readonly variant: string;
}

export interface SearchPage {
  readonly rows: SearchRow[];
  /** Number of matching plans (offset mode only; null in keyset mode). */
  readonly total: number | null;
  readonly hasMore: boolean;
  /** False when `afterId` named no plan of this result (stale or forged cursor). */
  readonly cursorFound: boolean;
}

/** Runs a search; pure and synchronous. */
export function searchPlans(ds: Dataset, q: SearchQuery): SearchPage {
  const order = orderedPositions(ds, q);
  const f = q.filters;
  const matches = (pos: number): SearchRow | null => {
    const p = ds.listPlan(q.listId, pos);
    const s = ds.plan(p);
    if (!f.includeCatastrophic && s.metal === 'catastrophic') return null;
    if (f.metalLevel !== undefined && s.metal !== f.metalLevel) return null;
    if (f.planType !== undefined && s.planType !== f.planType) return null;
    if (f.hsaEligible !== undefined && ((s.flags & PLAN_FLAG.hsaEligible) !== 0) !== f.hsaEligible) return null;
    if (f.issuer !== undefined && !s.issuer.toLowerCase().includes(f.issuer)) return null;
    const cents = ds.listPremiumCents(q.listId, pos, q.age);
    if (cents === 0) return null; // not sold at this age (child-only plans for adults, for example)
    if (f.maxPremium !== undefined && cents > Math.round(f.maxPremium * 100)) return null;
    const csr = q.csr !== null && s.metal === 'silver' ? q.csr : null;
    if (f.maxDeductible !== undefined) {
      const d = csr !== null ? csr.deductible(p) : s.deductible;
      if (d === null || d > f.maxDeductible) return null;
    }
    return { planIndex: p, position: pos, premiumCents: cents, variant: csr !== null ? csr.suffix : '01' };
  };

  const rows: SearchRow[] = [];
  let total = 0;
  let hasMore = false;
  if (q.afterId !== undefined) {
    let passed = false;
    for (const pos of order) {
      if (!passed) {
        if (ds.plan(ds.listPlan(q.listId, pos)).standardComponentId === q.afterId) passed = true;
        continue;
      }
      const row = matches(pos);
      if (row === null) continue;
      if (rows.length === q.pageSize) {
        hasMore = true;
        break;
      }
      rows.push(row);
    }
    return { rows, total: null, hasMore, cursorFound: passed };
  }
  const skip = (q.page - 1) * q.pageSize;
  for (const pos of order) {
    const row = matches(pos);
    if (row === null) continue;
    if (total >= skip && rows.length < q.pageSize) rows.push(row);
    total++;
  }
  hasMore = total > skip + rows.length;
  return { rows, total, hasMore, cursorFound: true };
}

/** Positions of the list in the requested order. */
function orderedPositions(ds: Dataset, q: SearchQuery): Iterable<number> {
  const stored = ds.listOrder(q.listId, q.sortBy, q.age);
  const needsResort = q.csr !== null && (q.sortBy === 'deductible' || q.sortBy === 'max_oop');
  const keyOf = sortKeyReader(ds, q);
  if (needsResort) {
    const positions = Array.from(stored);
    const id = (pos: number): string => ds.plan(ds.listPlan(q.listId, pos)).standardComponentId;
    positions.sort((a, b) => compareKeys(keyOf(a), keyOf(b), q.descending) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
    return positions;
  }
  if (!q.descending) return stored;
  return descendingRuns(stored, keyOf);
}

type Key = number | string | null;

function sortKeyReader(ds: Dataset, q: SearchQuery): (pos: number) => Key {
  const summary = (pos: number): PlanSummaryFields => ds.plan(ds.listPlan(q.listId, pos));
  const csrFor = (s: PlanSummaryFields): CsrOverride | null => (q.csr !== null && s.metal === 'silver' ? q.csr : null);
  switch (q.sortBy) {
    case 'premium':
      return (pos) => {
        const c = ds.listPremiumCents(q.listId, pos, q.age);
        return c === 0 ? null : c;
      };
    case 'deductible':
      return (pos) => {
        const s = summary(pos);
        const csr = csrFor(s);
        return csr !== null ? csr.deductible(s.index) : s.deductible;
      };
    case 'max_oop':
      return (pos) => {
        const s = summary(pos);
        const csr = csrFor(s);
        return csr !== null ? csr.maxOutOfPocket(s.index) : s.maxOutOfPocket;
      };
    case 'name':
      return (pos) => summary(pos).name.toLowerCase();
  }
}

/** Nulls last in both directions; otherwise ascending or descending. */
function compareKeys(a: Key, b: Key, descending: boolean): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  const c = a < b ? -1 : a > b ? 1 : 0;
  return descending ? -c : c;
}

/** Reverses an ascending order by key while keeping plan-id order inside runs of equal keys and nulls last. */
function* descendingRuns(stored: Uint16Array, keyOf: (pos: number) => Key): Generator<number> {
  let end = stored.length;
  // Nulls sit at the end of the ascending order; emit them last.
  let firstNull = end;
  while (firstNull > 0 && keyOf(stored[firstNull - 1]!) === null) firstNull--;
  end = firstNull;
  while (end > 0) {
    const k = keyOf(stored[end - 1]!);
    let start = end - 1;
    while (start > 0 && keyOf(stored[start - 1]!) === k) start--;
    for (let i = start; i < end; i++) yield stored[i]!;
    end = start;
  }
  for (let i = firstNull; i < stored.length; i++) yield stored[i]!;
}
