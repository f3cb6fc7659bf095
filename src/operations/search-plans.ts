/**
 * @module `GET /v1/health/plans`: plans offered at a location, priced for one age (docs/compatibility.md#plan-search).
 *
 * Offset pages and opaque keyset cursors share one ordering (sort key, then plan id). A cursor carries
 * the last row's key and id plus a fingerprint of the query and the data build, so a cursor replayed
 * against another query or another build is refused instead of silently paging something else.
 */
import type { Mutable } from '../engine/mutable.ts';
import { HashStream } from '../encoding/fast-hash.ts';
import { ByteWriter } from '../encoding/byte-writer.ts';
import type { SortKey, ZipLocation } from '../engine/dataset.ts';
import { searchInto, SearchRows, type CsrOverride, type SearchFilters, type SearchQuery } from '../engine/search.ts';
import { AptcEstimateRecord, csrVariantFor, estimateAptcInto } from '../engine/subsidy.ts';
import { HouseholdList } from '../engine/household-list.ts';
import { HouseholdRater } from '../engine/household-rater.ts';
import { resolveLocation } from './location.ts';
import type { YearData } from './data-registry.ts';
import { defineOperation } from './operation.ts';
import { NO_ERRORS, validationProblem, type FieldError } from './problems.ts';
import { compileQuery, type JsonSchema } from './query.ts';
import { HOUSEHOLD_MEMBERS, LABELS, LINKS_OF, PRICED_AT, PLAN_SUMMARY, LOCATED_PAGE_REQUIRED } from './shared-schemas.ts';
import {
  FILTER_SETTERS,
  PAGING_AND_ORDER,
  proParametersUsed,
  SEARCH_PARAMETER_ENTRIES,
  SEARCH_PROPERTIES,
  SEARCH_REQUIRED,
  type SearchParams,
} from './search-parameters.ts';
import { SearchPageModel } from './search-page.ts';
import { scratchPart, type RequestScratch } from './request-scratch.ts';

export type { SearchParams };

/**
 * Why a cursor is refused; each says what to do, since a client can only repair what it is told. Worded
 * for both fronts: a tool result has no links to follow, but REST and MCP both carry next_cursor.
 */
const CURSOR_MALFORMED = 'Not a cursor this API issued: send the next_cursor of the previous page unchanged';
const CURSOR_OTHER_QUERY =
  'Issued for another query (other filters or sort): send it with the parameters of the request that returned it, or drop it to start again';
/** A cursor of an earlier format, which does not say its year and build, so the cause is one of these. */
const CURSOR_OTHER_QUERY_OR_BUILD =
  'Issued for another query (other filters, sort, year or data build): send it with the parameters of the request that returned it, or drop it to start again';
const cursorOtherYear = (issued: number, asked: number): string =>
  `Issued for plan year ${issued}, not ${asked}: send year=${issued} with the parameters of the request that returned it, or drop it to start again`;
// Repeating the request cannot help here: a walk through the pages never mixes two builds.
const cursorOtherBuild = (year: number): string =>
  `Issued by another build of the ${year} plan data (the data was updated since): drop it to start again from the first page`;
const CURSOR_GONE = 'Points after a plan that is no longer in these results: drop it to start again';

const QUERY = compileQuery<SearchParams>({
  schema: { type: 'object', properties: SEARCH_PROPERTIES, required: [...SEARCH_REQUIRED] },
  aliases: { page_size: 'per_page', sort: 'sort_by', order: 'sort_order' },
  lists: ['ages'],
  alternatives: [['age', 'ages']],
});

/** Parameters echoed by the first/next/prev/last links, which set page or cursor themselves. */
const LINK_ORDER = QUERY.order.filter((k) => k !== 'page' && k !== 'cursor');
/** Parameters echoed by the stats link (get-plan-stats.ts). */
const STATS_ORDER = QUERY.order.filter((k) => !PAGING_AND_ORDER.has(k));

interface Cursor {
  readonly v: 1;
  readonly k: [number | string | null, string];
  readonly f: string;
  /**
   * Plan year and build (first 12 characters of its hash) that issued it: the fingerprint `f` covers
   * both, these say which one differs when it does not match. Absent from cursors issued before them.
   */
  readonly y?: number;
  readonly b?: string;
}

export const SEARCH_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'first', 'next', 'prev', 'last', 'plan_detail', 'stats'], ['self', 'stats']),
    _embedded: {
      type: 'object',
      description: 'HAL embedded resources',
      properties: { plans: { type: 'array', items: PLAN_SUMMARY, description: 'The plans of this page, in the requested order' } },
      required: ['plans'],
      additionalProperties: false,
    },
    total: { type: ['integer', 'null'], description: 'Plans matching the search; null when paging by cursor' },
    page: { type: ['integer', 'null'], description: 'Page number (from 1); null when paging by cursor' },
    per_page: { type: 'integer', description: 'Plans per page' },
    page_size: { type: 'integer', description: 'Same as per_page; present only when the request used the page_size alias' },
    next_cursor: {
      type: 'string',
      description: 'Cursor of the next page, to send as cursor with the same parameters; absent on the last page',
    },
    members: HOUSEHOLD_MEMBERS,
    zip: { type: 'string', description: 'The ZIP code searched' },
    state: { type: 'string', description: 'Two-letter state code of the location priced' },
    ...PRICED_AT,
    ...LABELS,
  },
  required: ['_links', '_embedded', 'total', 'page', 'per_page', ...LOCATED_PAGE_REQUIRED],
  additionalProperties: false,
} as const;

export const searchPlansOperation = defineOperation({
  id: 'searchPlans',
  toolName: 'search_plans',
  path: '/v1/health/plans',
  summary: 'Search plans',
  description:
    'Plans offered at a ZIP (and county) with premiums for the given age, or for a household (ages: the household’s total, sorted, filtered and paged by it); offset pages or keyset cursors. Catastrophic plans are listed when every member is under 30, or when metal_level=catastrophic is asked for. With income and household_size, premium_with_credit is the premium after the estimated APTC and silver plans show their cost-sharing-reduction variant when the household qualifies.',
  tier: 'free',
  query: QUERY,
  pathParams: [],
  proParams: proParametersUsed,
  responseSchema: SEARCH_RESPONSE,
  check(p) {
    const errors = householdRules(p);
    return p.cursor !== undefined && p.page > 1 ? [...errors, { field: 'page', message: 'Must not be given with cursor' }] : errors;
  },
  handle(ctx, p, meta, scratch) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const s = scratch.part(SEARCH_SCRATCH);
    const pricing = s.pricing.set(yd, p, where.loc, scratch.part(CREDIT_ESTIMATE));
    const csrSuffix = pricing.csr?.suffix ?? null;
    let afterId: string | undefined;
    // Needed to check a cursor and to write the next one: fed once (the scratch's stream keeps it meanwhile).
    let fingerprint: HashStream | null = null;
    if (p.cursor !== undefined) {
      const c = decodeCursor(p.cursor);
      if (c === null) throw validationProblem([{ field: 'cursor', message: CURSOR_MALFORMED }]);
      fingerprint = fingerprintOf(s.fingerprint, yd, where.loc, p, csrSuffix);
      if (c.f !== fingerprint.digest()) throw validationProblem([{ field: 'cursor', message: cursorMismatch(c, p.year, buildOf(yd)) }]);
      afterId = c.k[1];
    }
    const q = s.query;
    q.listId = where.loc.listId;
    q.age = pricedAge(p);
    q.household = pricing.household;
    q.sortBy = p.sort_by;
    q.descending = p.sort_order === 'desc';
    q.filters = pricing.filters;
    q.csr = pricing.csr;
    q.pageSize = p.per_page;
    q.page = p.page;
    q.afterId = afterId;
    const rows = searchInto(yd.ds, q, s.rows);
    if (!rows.cursorFound) throw validationProblem([{ field: 'cursor', message: CURSOR_GONE }]);
    const page = s.page;
    page.cursor.reset();
    const last = rows.count - 1;
    if (rows.hasMore && last >= 0) {
      writeCursor(page.cursor, s.cursorJson, yd, rows, last, p, fingerprint ?? fingerprintOf(s.fingerprint, yd, where.loc, p, csrSuffix));
    }
    return page.set(scratch, ctx.baseUrl, yd, where, rows, p, meta, pricing.aptcMonthly, pricing.rater);
  },
});

/** The search parameters that choose and price plans: all but page, order and cursor. */
export type SearchFilterParams = Omit<SearchParams, 'sort_by' | 'sort_order' | 'cursor' | 'page' | 'per_page'>;

/** Schemas of those parameters, in the search's documentation order (the stats resource takes them). */
export const SEARCH_FILTER_PROPERTIES: Readonly<Record<string, JsonSchema>> = Object.fromEntries(
  Object.entries(SEARCH_PROPERTIES).filter(([k]) => !PAGING_AND_ORDER.has(k)),
);

/** income and household_size come together (the credit needs both). */
export function incomeRule(p: Pick<SearchParams, 'income' | 'household_size'>): readonly FieldError[] {
  if ((p.income === undefined) === (p.household_size === undefined)) return NO_ERRORS;
  return [{ field: p.income === undefined ? 'income' : 'household_size', message: 'Required' }];
}

/** {@link incomeRule}, and a household no larger than the tax household it is part of. */
export function householdRules(p: Pick<SearchParams, 'income' | 'household_size' | 'ages'>): readonly FieldError[] {
  const errors = incomeRule(p);
  if (p.ages !== undefined && p.household_size !== undefined && p.ages.length > p.household_size)
    return [...errors, { field: 'ages', message: 'More members than household_size' }];
  return errors;
}

/** The age a search's stored orders are read for: the one asked, or a household's oldest member. */
export function pricedAge(p: Pick<SearchParams, 'age' | 'ages'>): number {
  if (p.age !== undefined) return p.age;
  let oldest = 0;
  for (const a of p.ages!) if (a > oldest) oldest = a;
  return oldest;
}

/** The ages priced: the household's, or the one applicant's. */
export function pricedAges(p: Pick<SearchParams, 'age' | 'ages'>): readonly number[] {
  return p.ages ?? [p.age!];
}

/**
 * The household's monthly APTC in dollars for the priced ages, or null when no income was given. Only
 * the credit is read, so the estimate is made into `into`, a reused record (an object graph otherwise).
 */
export function householdAptc(
  yd: YearData,
  loc: ZipLocation,
  p: Pick<SearchParams, 'age' | 'ages' | 'income' | 'household_size'>,
  into: AptcEstimateRecord,
): number | null {
  if (p.income === undefined || p.household_size === undefined) return null;
  return estimateAptcInto(yd.ds, yd.rules, loc, { income: p.income, householdSize: p.household_size, ages: pricedAges(p) }, into)
    .aptc_amount;
}

/** The record a request's credit is estimated into when only the amount is read ({@link householdAptc}). */
export const CREDIT_ESTIMATE = scratchPart('credit estimate', () => new AptcEstimateRecord());

/** Filters, cost-sharing view and credit of a search's parameters at its location. */
export class SearchPricing {
  // Every filter present from the start, so the object keeps one shape whatever a request sets.
  readonly filters: Mutable<SearchFilters> = {
    ...Object.fromEntries(FILTER_SETTERS.map((s) => [s.key, undefined])),
    includeCatastrophic: false,
  };
  aptcMonthly: number | null = null;
  csr: CsrOverride | null = null;
  household: HouseholdList | null = null;
  rater: HouseholdRater | null = null;
  /** What {@link rater} and {@link household} point at when ages are priced. */
  readonly #rater = new HouseholdRater();
  readonly #list = new HouseholdList();

  /** Prices `p` at `loc` into this (rewritten by its next call); the credit is estimated into `estimate`. */
  set(yd: YearData, p: SearchFilterParams, loc: ZipLocation, estimate: AptcEstimateRecord): this {
    const f = this.filters as Record<keyof SearchFilters, unknown>;
    const values = p as unknown as Readonly<Record<string, unknown>>;
    for (let i = 0; i < FILTER_SETTERS.length; i++) {
      const { name, key, from } = FILTER_SETTERS[i]!;
      const v = values[name];
      f[key] = v === undefined || from === undefined ? v : from(v);
    }
    // Catastrophic coverage is for people under 30: a household qualifies only when every member does.
    this.filters.includeCatastrophic = pricedAge(p) < 30 || this.filters.metalLevel === 'catastrophic';
    this.aptcMonthly = householdAptc(yd, loc, p, estimate);
    this.csr = null;
    if (p.income !== undefined && p.household_size !== undefined) {
      const suffix = csrVariantFor(yd.rules, p.income, p.household_size, loc.state);
      if (suffix !== null) this.csr = csrOverride(yd, suffix);
    }
    this.rater = p.ages === undefined ? null : this.#rater.set(yd.ds, yd.rules, loc, p.ages);
    this.household = this.rater === null ? null : this.#list.fill(yd.ds, this.rater);
    return this;
  }
}

/** {@link SearchPricing} of `p` at `loc`, in objects of its own (the credit estimated in the scratch). */
export function searchPricing(yd: YearData, p: SearchFilterParams, loc: ZipLocation, scratch: RequestScratch): SearchPricing {
  return new SearchPricing().set(yd, p, loc, scratch.part(CREDIT_ESTIMATE));
}

/** The records a search reuses: its pricing, query, rows, page, cursor text and fingerprint stream. */
class SearchScratch {
  readonly rows = new SearchRows();
  readonly pricing = new SearchPricing();
  readonly query: Mutable<SearchQuery> = {
    listId: 0,
    age: 0,
    household: null,
    sortBy: 'premium',
    descending: false,
    filters: this.pricing.filters,
    csr: null,
    pageSize: 1,
    page: 1,
    afterId: undefined,
  };
  readonly page = new SearchPageModel(LINK_ORDER, QUERY.order, STATS_ORDER);
  /** Where a cursor's JSON is written before it is encoded. */
  readonly cursorJson = new ByteWriter(1 << 10);
  readonly fingerprint = new HashStream();
}

const SEARCH_SCRATCH = scratchPart('search', () => new SearchScratch());

/** A year's cost-sharing views by suffix, made once (their readers are closures over the catalog). */
const CSR_VIEWS = new WeakMap<YearData, Map<string, CsrOverride>>();

function csrOverride(yd: YearData, suffix: '04' | '05' | '06'): CsrOverride {
  let views = CSR_VIEWS.get(yd);
  if (views === undefined) CSR_VIEWS.set(yd, (views = new Map()));
  let view = views.get(suffix);
  if (view === undefined) views.set(suffix, (view = csrView(yd, suffix)));
  return view;
}

function csrView(yd: YearData, suffix: '04' | '05' | '06'): CsrOverride {
  return {
    suffix,
    deductible: (i) => yd.catalog.get(i, suffix)?.deductible.individual ?? yd.catalog.get(i, '01')!.deductible.individual,
    maxOutOfPocket: (i) => yd.catalog.get(i, suffix)?.max_out_of_pocket.individual ?? yd.catalog.get(i, '01')!.max_out_of_pocket.individual,
  };
}

/** Writes the JSON of a row's sort key into `w`, as JSON.stringify writes the key's value. */
function writeKey(w: ByteWriter, yd: YearData, rows: SearchRows, i: number, sortBy: SortKey): void {
  const planIndex = rows.planIndex[i]!;
  const parts = yd.catalog.get(planIndex, rows.variant(i)) ?? yd.catalog.get(planIndex, '01')!;
  switch (sortBy) {
    case 'premium':
      w.cents(rows.premiumCents[i]!);
      return;
    case 'deductible':
      writeNullableNumber(w, parts.deductible.individual);
      return;
    case 'max_oop':
      writeNullableNumber(w, parts.max_out_of_pocket.individual);
      return;
    case 'name':
      w.jsonString(parts.name.toLowerCase());
      return;
  }
}

function writeNullableNumber(w: ByteWriter, n: number | null): void {
  if (n === null) w.latin1('null');
  else w.number(n);
}

/** The lanes of a fingerprint after its first field, the build's hash: the same for every search of a build. */
const BUILD_PREFIXES = new WeakMap<YearData, { readonly a: number; readonly b: number }>();

/** Feeds `s` then the field separator. */
function field(h: HashStream, s: string): void {
  h.text(s);
  h.char(0);
}

/** Feeds `String(n)` (nothing when absent) then the field separator. */
function numberField(h: HashStream, n: number | undefined): void {
  if (n !== undefined) h.number(n);
  h.char(0);
}

/** The parameters fed where they stand, then those fed when given, as the table declares them. */
const FED_IN_PLACE = SEARCH_PARAMETER_ENTRIES.flatMap(([name, p]) => (p.cursor.fed === 'in-place' ? [{ name, as: p.cursor.as }] : []));
const FED_WHEN_GIVEN = SEARCH_PARAMETER_ENTRIES.flatMap(([name, p]) => (p.cursor.fed === 'when-given' ? [{ name, as: p.cursor.as }] : []));

/** Feeds a value as its text (`true`/`false` for a boolean), nothing for an absent one. */
function value(h: HashStream, v: unknown): void {
  if (typeof v === 'number') h.number(v);
  else if (typeof v === 'string') h.text(v);
  else if (typeof v === 'boolean') h.text(v ? 'true' : 'false');
}

/**
 * The fingerprint of a search's query and build: fastHash of its fields joined by NUL (the text cursors
 * have always carried), fed field by field so that no text is made: the build, the parameters bound in
 * place (search-parameters.ts; the location as the ZIP, the county and the rating area it resolved to),
 * the cost-sharing variant shown, then each parameter bound when given, as its name and values, into
 * `stream` (reset first).
 */
function fingerprintOf(stream: HashStream, yd: YearData, loc: ZipLocation, p: SearchParams, csr: string | null): HashStream {
  let prefix = BUILD_PREFIXES.get(yd);
  if (prefix === undefined) {
    field(stream.reset(), yd.ds.buildHash);
    BUILD_PREFIXES.set(yd, (prefix = { a: stream.laneA, b: stream.laneB }));
  }
  const h = stream.resume(prefix.a, prefix.b);
  const values = p as unknown as Readonly<Record<string, unknown>>;
  for (let i = 0; i < FED_IN_PLACE.length; i++) {
    const { name, as } = FED_IN_PLACE[i]!;
    const v = values[name];
    if (as === 'location') {
      field(h, v as string);
      field(h, loc.countyFips);
      numberField(h, loc.areaIndex);
    } else if (as === 'lowercase') field(h, v === undefined ? '' : (v as string).toLowerCase());
    else {
      value(h, v);
      h.char(0);
    }
  }
  h.text(csr ?? '');
  for (let i = 0; i < FED_WHEN_GIVEN.length; i++) {
    const { name } = FED_WHEN_GIVEN[i]!;
    const v = values[name];
    if (v === undefined) continue;
    h.char(0);
    h.text(name);
    if (Array.isArray(v)) {
      for (let j = 0; j < v.length; j++) {
        h.char(0);
        value(h, v[j]);
      }
    } else {
      h.char(0);
      value(h, v);
    }
  }
  return h;
}

/** The build named in cursors: enough of its hash to tell builds apart, as `/readyz` and the logs do. */
const BUILD_NAMES = new WeakMap<YearData, string>();
function buildOf(yd: YearData): string {
  let name = BUILD_NAMES.get(yd);
  if (name === undefined) BUILD_NAMES.set(yd, (name = yd.ds.buildHash.slice(0, 12)));
  return name;
}

/** Why a cursor's fingerprint does not match this request: the year, the build, or else the query. */
function cursorMismatch(c: Cursor, year: number, build: string): string {
  if (c.y === undefined || c.b === undefined) return CURSOR_OTHER_QUERY_OR_BUILD;
  if (c.y !== year) return cursorOtherYear(c.y, year);
  if (c.b !== build) return cursorOtherBuild(year);
  return CURSOR_OTHER_QUERY;
}

/**
 * Writes the cursor after row `last` into `out` as base64url text: the JSON JSON.stringify gives for
 * `{v: 1, k: [key, id], f: fingerprint, y: year, b: build}` (written into `w` first), encoded, with no
 * string made on the way.
 */
function writeCursor(
  out: ByteWriter,
  w: ByteWriter,
  yd: YearData,
  rows: SearchRows,
  last: number,
  p: SearchParams,
  fingerprint: HashStream,
): void {
  w.reset();
  w.latin1('{"v":1,"k":[');
  writeKey(w, yd, rows, last, p.sort_by);
  w.byte(44); // ,
  w.jsonString(yd.ds.plan(rows.planIndex[last]!).standardComponentId);
  w.latin1('],"f":"');
  fingerprint.digestInto(w);
  w.latin1('","y":');
  w.uint(p.year);
  w.latin1(',"b":');
  w.jsonString(buildOf(yd));
  w.byte(125); // }
  out.base64url(w.buf, 0, w.at);
}

function decodeCursor(s: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (c.v !== 1 || !Array.isArray(c.k) || c.k.length !== 2 || typeof c.k[1] !== 'string' || typeof c.f !== 'string') return null;
    if ((c.y !== undefined && !Number.isInteger(c.y)) || (c.b !== undefined && typeof c.b !== 'string')) return null;
    return c as Cursor;
  } catch {
    return null;
  }
}
