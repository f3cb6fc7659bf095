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
import { ageBand } from './age-bands.ts';
import { METAL_CODES, PLAN_FLAG, PLAN_TYPE_CODES } from './build-format.ts';
import type { Dataset, ListOrderRef, PlanSummaryFields, SortKey } from './dataset.ts';
import type { HouseholdList } from './household-list.ts';
import type { MetalLevel, PlanType } from './plan-record.ts';

export interface SearchFilters {
  readonly metalLevel?: MetalLevel;
  readonly planType?: PlanType;
  /** Lower-cased substring of the issuer name. */
  readonly issuer?: string;
  readonly hsaEligible?: boolean;
  /** Dollars, compared with the premium before credit (the household's total when a household is priced). */
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
  /** The age priced; with a household, its oldest member (the seed of its order, see household-list.ts). */
  readonly age: number;
  /**
   * A household priced instead of one age: every premium shown, filtered, sorted and paged by is its
   * total, and plans that cannot cover it do not match. The list must be this query's location's.
   */
  readonly household?: HouseholdList | null;
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

/** Rows a page can hold: the largest `per_page`. */
export const MAX_PAGE_ROWS = 100;

/**
 * A page as columns, written in place by {@link searchInto}: a front that turns the page straight into
 * bytes needs no object per row. Reused by its owner's searches (a request scratch's,
 * src/operations/request-scratch.ts): its contents are valid until the next search written into it.
 */
export class SearchRows {
  readonly planIndex = new Int32Array(MAX_PAGE_ROWS);
  readonly position = new Int32Array(MAX_PAGE_ROWS);
  readonly premiumCents = new Int32Array(MAX_PAGE_ROWS);
  /** 1 when the row shows the CSR variant `csrSuffix` (a silver plan under cost-sharing reductions). */
  readonly csr = new Uint8Array(MAX_PAGE_ROWS);
  csrSuffix: '04' | '05' | '06' | null = null;
  count = 0;
  /** Number of matching plans (offset mode only; null in keyset mode). */
  total: number | null = 0;
  hasMore = false;
  /** False when `afterId` named no plan of this result (stale or forged cursor). */
  cursorFound = true;
  /** The matcher, stored order and descending buffer of the searches written here (their working memory). */
  readonly work = new SearchWork();

  variant(i: number): string {
    return this.csr[i] === 1 && this.csrSuffix !== null ? this.csrSuffix : '01';
  }
}

const CATASTROPHIC = METAL_CODES.indexOf('catastrophic');
const SILVER = METAL_CODES.indexOf('silver');
/** Code of a filter value; -1 matches nothing, `ANY` when there is no filter. */
const ANY = -2;
const codeOf = (codes: readonly string[], value: string | undefined): number => (value === undefined ? ANY : codes.indexOf(value));

/** Runs a search; pure and synchronous. Rows as objects: see {@link searchInto} for the columns. */
export function searchPlans(ds: Dataset, q: SearchQuery): SearchPage {
  const out = searchInto(ds, q, new SearchRows());
  const rows: SearchRow[] = [];
  for (let i = 0; i < out.count; i++)
    rows.push({ planIndex: out.planIndex[i]!, position: out.position[i]!, premiumCents: out.premiumCents[i]!, variant: out.variant(i) });
  return { rows, total: out.total, hasMore: out.hasMore, cursorFound: out.cursorFound };
}

/** What one search compares a list position against, decoded once from its query (search-stats.ts counts with it too). */
export class Matcher {
  base = 0;
  centsBase = 0;
  skipCatastrophic = false;
  metal = ANY;
  type = ANY;
  hsa = ANY;
  maxCents = Number.POSITIVE_INFINITY;
  /** The household's totals by position, or null when one age is priced. */
  householdCents: Int32Array | null = null;

  ds: Dataset;
  q: SearchQuery;

  constructor(ds: Dataset, q: SearchQuery) {
    this.ds = ds;
    this.q = q;
    this.init(ds, q);
  }

  /** Decodes `q` into this matcher (reused by the searches written into one {@link SearchRows}). */
  init(ds: Dataset, q: SearchQuery): this {
    this.ds = ds;
    this.q = q;
    const f = q.filters;
    this.base = ds.columns.listStart[q.listId]!;
    this.centsBase = ageBand(q.age) * ds.columns.entryCount + this.base;
    this.skipCatastrophic = !f.includeCatastrophic;
    this.metal = codeOf(METAL_CODES, f.metalLevel);
    this.type = codeOf(PLAN_TYPE_CODES, f.planType);
    this.hsa = f.hsaEligible === undefined ? ANY : f.hsaEligible ? PLAN_FLAG.hsaEligible : 0;
    this.maxCents = f.maxPremium === undefined ? Number.POSITIVE_INFINITY : Math.round(f.maxPremium * 100);
    this.householdCents = q.household?.cents ?? null;
    return this;
  }

  /**
   * The premium at a position when the plan there passes every filter, else 0. Hot: one call per plan
   * of the list (the total counts them all), so it reads the list's own columns and allocates nothing.
   */
  cents(pos: number): number {
    const { entryMetal, entryType, entryFlags, entryCents, entryPlan } = this.ds.columns;
    const e = this.base + pos;
    const m = entryMetal[e]!;
    if (this.skipCatastrophic && m === CATASTROPHIC) return 0;
    if (this.metal !== ANY && m !== this.metal) return 0;
    if (this.type !== ANY && entryType[e] !== this.type) return 0;
    if (this.hsa !== ANY && (entryFlags[e]! & PLAN_FLAG.hsaEligible) !== this.hsa) return 0;
    const household = this.householdCents;
    const cents = household === null ? entryCents[this.centsBase + pos]! : household[pos]!;
    // 0: not sold at this age (child-only plans for adults), or cannot cover the household
    if (cents === 0 || cents > this.maxCents) return 0;
    const f = this.q.filters;
    if (f.issuer !== undefined && !this.ds.plan(entryPlan[e]!).issuer.toLowerCase().includes(f.issuer)) return 0;
    if (f.maxDeductible !== undefined) {
      const d = this.deductible(pos);
      if (d === null || d > f.maxDeductible) return 0;
    }
    return cents;
  }

  /** The individual deductible a search shows for the plan at a position: a silver plan's CSR variant's under cost-sharing reductions. */
  deductible(pos: number): number | null {
    const e = this.base + pos;
    const p = this.ds.columns.entryPlan[e]!;
    const csr = this.q.csr;
    return csr !== null && this.ds.columns.entryMetal[e] === SILVER ? csr.deductible(p) : this.ds.plan(p).deductible;
  }
}

/** What {@link searchInto} decodes a query into and orders a list with, kept by the rows it writes. */
export class SearchWork {
  matcher: Matcher | null = null;
  readonly order: ListOrderRef = { positions: new Uint16Array(0), start: 0, length: 0 };
  /** Where descending orders are written (grown to the longest list seen). */
  descending = new Uint16Array(256);
}

/** Runs a search into `out` (reused: see {@link SearchRows}); pure and synchronous. */
export function searchInto(ds: Dataset, q: SearchQuery, out: SearchRows): SearchRows {
  const { entryPlan, entryMetal } = ds.columns;
  const work = out.work;
  const match = work.matcher === null ? (work.matcher = new Matcher(ds, q)) : work.matcher.init(ds, q);
  const base = match.base;
  const csr = q.csr;
  const csrSilver = csr !== null;
  out.count = 0;
  out.csrSuffix = csr?.suffix ?? null;
  const ref = orderedPositions(ds, q, work);
  const order = ref.positions;
  const from = ref.start;
  const to = from + ref.length;
  // Rows are written inline (a closure per search was the engine's largest allocation).
  if (q.afterId !== undefined) {
    out.total = null;
    out.hasMore = false;
    const after = ds.planIndex(q.afterId);
    let i = from;
    while (i < to && entryPlan[base + order[i]!] !== after) i++;
    out.cursorFound = i < to;
    for (i++; i < to; i++) {
      const pos = order[i]!;
      const cents = match.cents(pos);
      if (cents === 0) continue;
      if (out.count === q.pageSize) {
        out.hasMore = true;
        break;
      }
      const n = out.count++;
      out.planIndex[n] = entryPlan[base + pos]!;
      out.position[n] = pos;
      out.premiumCents[n] = cents;
      out.csr[n] = csrSilver && entryMetal[base + pos] === SILVER ? 1 : 0;
    }
    return out;
  }
  const skip = (q.page - 1) * q.pageSize;
  let total = 0;
  for (let i = from; i < to; i++) {
    const pos = order[i]!;
    const cents = match.cents(pos);
    if (cents === 0) continue;
    if (total >= skip && out.count < q.pageSize) {
      const n = out.count++;
      out.planIndex[n] = entryPlan[base + pos]!;
      out.position[n] = pos;
      out.premiumCents[n] = cents;
      out.csr[n] = csrSilver && entryMetal[base + pos] === SILVER ? 1 : 0;
    }
    total++;
  }
  out.total = total;
  out.hasMore = total > skip + out.count;
  out.cursorFound = true;
  return out;
}

/** Positions of the list in the requested order, written into the work's order. */
function orderedPositions(ds: Dataset, q: SearchQuery, work: SearchWork): ListOrderRef {
  const ref = work.order;
  const household = q.household ?? null;
  if (household !== null && q.sortBy === 'premium') {
    ref.positions = household.order;
    ref.start = 0;
    ref.length = household.size;
  } else ds.listOrderInto(q.listId, q.sortBy, q.age, ref);
  const needsResort = q.csr !== null && (q.sortBy === 'deductible' || q.sortBy === 'max_oop');
  // The stored ascending order is the answer of most searches: no key reader is made for it.
  if (!needsResort && !q.descending) return ref;
  const stored = ref.positions.subarray(ref.start, ref.start + ref.length);
  const keyOf = sortKeyReader(ds, q);
  ref.start = 0;
  if (needsResort) {
    const id = (pos: number): string => ds.plan(ds.listPlan(q.listId, pos)).standardComponentId;
    ref.positions = stored
      .slice()
      .sort((a, b) => compareKeys(keyOf(a), keyOf(b), q.descending) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
    return ref;
  }
  if (work.descending.length < stored.length) work.descending = new Uint16Array(stored.length);
  ref.positions = descendingRuns(stored, keyOf, work.descending);
  return ref;
}

type Key = number | null;

/** The sort key at a list position; names as numbers that are equal exactly when the names are. */
function sortKeyReader(ds: Dataset, q: SearchQuery): (pos: number) => Key {
  const { listStart, entryPlan, entryCents, entryCount, nameKey } = ds.columns;
  const base = listStart[q.listId]!;
  const centsBase = ageBand(q.age) * entryCount + base;
  const summary = (pos: number): PlanSummaryFields => ds.plan(entryPlan[base + pos]!);
  const csrFor = (s: PlanSummaryFields): CsrOverride | null => (q.csr !== null && s.metal === 'silver' ? q.csr : null);
  switch (q.sortBy) {
    case 'premium': {
      const household = q.household?.cents ?? null;
      return (pos) => {
        const c = household === null ? entryCents[centsBase + pos]! : household[pos]!;
        return c === 0 ? null : c;
      };
    }
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
      return (pos) => nameKey[entryPlan[base + pos]!]!;
  }
}

/** Nulls last in both directions; otherwise ascending or descending. */
function compareKeys(a: Key, b: Key, descending: boolean): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  const c = a < b ? -1 : a > b ? 1 : 0;
  return descending ? -c : c;
}

/**
 * Reverses an ascending order by key while keeping plan-id order inside runs of equal keys and nulls
 * last, into `out` (at least as long; its first `stored.length` entries are written).
 */
function descendingRuns(stored: Uint16Array, keyOf: (pos: number) => Key, out: Uint16Array): Uint16Array {
  let at = 0;
  let end = stored.length;
  // Nulls sit at the end of the ascending order; emit them last.
  let firstNull = end;
  while (firstNull > 0 && keyOf(stored[firstNull - 1]!) === null) firstNull--;
  end = firstNull;
  while (end > 0) {
    const k = keyOf(stored[end - 1]!);
    let start = end - 1;
    while (start > 0 && keyOf(stored[start - 1]!) === k) start--;
    for (let i = start; i < end; i++) out[at++] = stored[i]!;
    end = start;
  }
  for (let i = firstNull; i < stored.length; i++) out[at++] = stored[i]!;
  return out;
}
