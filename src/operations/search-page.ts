/**
 * @module The page model of a plan search: what the page says (rows as plan indices and premiums in
 * cents, location, paging, the parts its links are made of), before it is written as anything.
 *
 * The REST front writes it straight into bytes (src/http/search-page-writer.ts); MCP and tests take
 * {@link SearchPageModel.toBody}, the same members as objects. Neither front builds the other's form, so a
 * REST search allocates no object per row and no string per link.
 */
import type { HouseholdRater } from '../engine/household-rater.ts';
import type { SearchRows } from '../engine/search.ts';
import { ByteWriter } from '../encoding/byte-writer.ts';
import { InvariantError } from '../invariant.ts';
import type { YearData } from './data-registry.ts';
import { locationFields, type ResolvedLocation } from './location.ts';
import { echoQuery, encodeValue, type PageModel, type RequestMeta } from './operation.ts';
import type { SummaryParts } from './plan-catalog.ts';
import { creditCentsFor, summaryRow } from './plan-summary-row.ts';
import type { SearchParams } from './search-parameters.ts';
import type { RequestScratch } from './request-scratch.ts';

/** A member of a household search. */
export interface SearchMember {
  readonly age: number;
  readonly charged: boolean;
}

/**
 * The page of a search: one per request scratch, like the rows it reads ({@link SearchRows}), so its
 * members are valid while the request that searched holds the scratch; reading it later throws.
 */
export class SearchPageModel implements PageModel {
  /** `HPD_BASE_URL`: links are `${baseUrl}/v1/health/plans…`. */
  baseUrl = '';
  yd: YearData = undefined as unknown as YearData;
  where: ResolvedLocation = undefined as unknown as ResolvedLocation;
  /** The scratch's rows (checked by {@link SearchPageModel.rowCount}). */
  rows: SearchRows = undefined as unknown as SearchRows;
  params: SearchParams = undefined as unknown as SearchParams;
  meta: RequestMeta = undefined as unknown as RequestMeta;
  /** Monthly APTC in dollars; null when no credit was asked for. */
  aptcMonthly: number | null = null;
  /** A household search's rater (its ages and who is charged); null for one age. */
  rater: HouseholdRater | null = null;
  /** The next page's cursor, base64url text as bytes; empty on the last page. */
  readonly cursor = new ByteWriter(1 << 10);
  /** Canonical names echoed by the links that set page or cursor themselves, in table order. */
  readonly linkOrder: readonly string[];
  /** Every canonical name, in table order (the self link). */
  readonly selfOrder: readonly string[];
  /** The names the stats resource takes (location, age, filters), in table order (the stats link). */
  readonly statsOrder: readonly string[];
  #scratch: RequestScratch | null = null;
  #lease = 0;

  constructor(linkOrder: readonly string[], selfOrder: readonly string[], statsOrder: readonly string[]) {
    this.linkOrder = linkOrder;
    this.selfOrder = selfOrder;
    this.statsOrder = statsOrder;
  }

  /**
   * Makes this the page of the search holding `scratch`, whose rows are in `rows` (and whose cursor is
   * already in {@link cursor}).
   */
  set(
    scratch: RequestScratch,
    baseUrl: string,
    yd: YearData,
    where: ResolvedLocation,
    rows: SearchRows,
    params: SearchParams,
    meta: RequestMeta,
    aptcMonthly: number | null,
    rater: HouseholdRater | null,
  ): this {
    this.baseUrl = baseUrl;
    this.yd = yd;
    this.where = where;
    this.rows = rows;
    this.params = params;
    this.meta = meta;
    this.aptcMonthly = aptcMonthly;
    this.rater = rater;
    this.#scratch = scratch;
    this.#lease = scratch.lease;
    return this;
  }

  check(): void {
    if (this.#scratch === null) throw new InvariantError('a search page model was read before any search');
    this.#scratch.check(this.#lease, 'a search page model');
  }

  /** The next page's cursor as text; undefined on the last page. */
  get nextCursor(): string | undefined {
    return this.cursor.at === 0 ? undefined : this.cursor.buf.toString('latin1', 0, this.cursor.at);
  }

  /** A household search's members in the order of its ages, and whether each is charged; null for one age. */
  get members(): SearchMember[] | null {
    const rater = this.rater;
    if (rater === null) return null;
    const counted = rater.rating.counted;
    return rater.ages.map((age, i) => ({ age, charged: counted === null || counted[i]! }));
  }

  /** Rows of the page; throws when the search's request has returned the scratch. */
  get rowCount(): number {
    this.check();
    return this.rows.count;
  }

  /** The summary parts shown for row `i`: the CSR variant's when shown and present, else the standard one. */
  parts(i: number): SummaryParts {
    const plan = this.rows.planIndex[i]!;
    return this.yd.catalog.get(plan, this.rows.variant(i)) ?? this.yd.catalog.get(plan, '01')!;
  }

  /** Premium after the credit in cents, -1 without an estimate. */
  creditCents(i: number, parts: SummaryParts): number {
    return creditCentsFor(this.rows.premiumCents[i]!, this.aptcMonthly, parts.metal_level, parts.ehb_share);
  }

  get total(): number | null {
    return this.rows.total;
  }

  /** `page` as answered: null when paging by cursor. */
  get page(): number | null {
    return this.rows.total === null ? null : this.params.page;
  }

  /** The last offset page (0 in keyset mode). */
  get lastPage(): number {
    const total = this.rows.total;
    return total === null ? 0 : Math.max(1, Math.ceil(total / this.params.per_page));
  }

  /** The `prev` link's page, or 0 when the page has no prev link. */
  get prevPage(): number {
    return this.rows.total !== null && this.params.page > 1 ? Math.min(this.params.page - 1, this.lastPage) : 0;
  }

  get pageSizeAlias(): boolean {
    return this.meta.aliasUsed.has('page_size');
  }

  get dataSource(): string {
    return this.yd.dataSource(this.where.loc.state);
  }

  get dataFreshness(): string {
    return this.yd.freshness(this.where.loc.state);
  }

  toBody(): Record<string, unknown> {
    const count = this.rowCount;
    const plans = [];
    for (let i = 0; i < count; i++) {
      const parts = this.parts(i);
      plans.push(summaryRow(parts, this.rows.premiumCents[i]!, this.creditCents(i, parts)));
    }
    const base = `${this.baseUrl}/v1/health/plans`;
    const restQuery = echoQuery(this.linkOrder, this.meta.raw);
    const q = (key: string, value: string): string => `${base}${restQuery}${restQuery === '' ? '?' : '&'}${key}=${encodeValue(value)}`;
    const p = this.params;
    return {
      _links: {
        self: { href: `${base}${echoQuery(this.selfOrder, this.meta.raw)}`, type: 'application/json' },
        first: { href: q('page', '1') },
        next: this.nextCursor === undefined ? undefined : { href: q('cursor', this.nextCursor) },
        prev: this.prevPage === 0 ? undefined : { href: q('page', String(this.prevPage)) },
        last: this.total === null ? undefined : { href: q('page', String(this.lastPage)) },
        plan_detail: { href: `${base}/{plan_id}?year=${p.year}`, templated: true },
        stats: { href: `${base}/stats${echoQuery(this.statsOrder, this.meta.raw)}`, type: 'application/json' },
      },
      _embedded: { plans },
      total: this.total,
      page: this.page,
      per_page: p.per_page,
      page_size: this.pageSizeAlias ? p.per_page : undefined,
      next_cursor: this.nextCursor,
      members: this.members ?? undefined,
      ...locationFields(this.where),
      plan_year: p.year,
      data_source: this.dataSource,
      data_freshness: this.dataFreshness,
    };
  }
}
