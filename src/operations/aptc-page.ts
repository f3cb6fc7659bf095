/**
 * @module The page model of an APTC estimate: the engine's estimate, the location and the request's
 * echo, before it is written as anything (the search page's design: src/operations/search-page.ts).
 * The REST front writes it as bytes (src/http/aptc-page-writer.ts); MCP and tests take toBody().
 */
import type { AptcEstimateRecord } from '../engine/subsidy.ts';
import { ratingAreaLabel, type YearData } from './data-registry.ts';
import { locationFields, type ResolvedLocation } from './location.ts';
import { echoQuery, type PageModel, type QueryValues, type RequestMeta } from './operation.ts';
import { type BenchmarkData, benchmarkDataOf } from './benchmark-data.ts';
import { InvariantError } from '../invariant.ts';
import type { RequestScratch } from './request-scratch.ts';

const NO_YEARS: readonly number[] = [];

/** The parameters an estimate echoes in its links. */
export interface AptcParams {
  readonly zip: string;
  readonly household_income: number;
  readonly household_size: number;
  readonly year: number;
}

/** What an APTC page is made of (the model's members, set once). */
/** The three wordings of `benchmark_plan_description`, around the place ("County, ST (Rating Area N)"). */
export const BENCHMARK_WORDS = {
  benchmarkOnly: {
    before: 'Approximate second-lowest-cost silver premium for this household in ',
    after: ', from published benchmark data: no plan data is loaded for ',
  },
  none: {
    before: 'No benchmark premium for this household in ',
    after: ': no silver plan is sold here and no published benchmark covers it, so the credit is not estimated',
  },
  plan: { before: 'Second-lowest-cost silver plan for this household in ', after: '' },
} as const;

/**
 * The page of an APTC estimate: one per request scratch, as is the estimate it reads, so its members are
 * valid while the request that estimated holds the scratch; reading it later throws.
 */
export class AptcPageModel implements PageModel {
  /** `HPD_BASE_URL`. */
  baseUrl = '';
  yd: YearData = undefined as unknown as YearData;
  where: ResolvedLocation = undefined as unknown as ResolvedLocation;
  params: AptcParams = undefined as unknown as AptcParams;
  meta: RequestMeta = undefined as unknown as RequestMeta;
  est: AptcEstimateRecord = undefined as unknown as AptcEstimateRecord;
  /** The build has plan data for the state: the page links to a search (else there is none to link to). */
  plansHere = false;
  /** Loaded years with plan data for the state (plan-data-years.ts). */
  planDataYears: readonly number[] = [];
  /** Every canonical name, in table order (the self link). */
  readonly selfOrder: readonly string[];
  #scratch: RequestScratch | null = null;
  #lease = 0;

  constructor(selfOrder: readonly string[]) {
    this.selfOrder = selfOrder;
  }

  /** Makes this the page of the estimate of the request holding `scratch`. */
  set(
    scratch: RequestScratch,
    baseUrl: string,
    yd: YearData,
    where: ResolvedLocation,
    params: AptcParams,
    meta: RequestMeta,
    est: AptcEstimateRecord,
    plansHere: boolean,
    planDataYears: readonly number[],
  ): this {
    this.baseUrl = baseUrl;
    this.yd = yd;
    this.where = where;
    this.params = params;
    this.meta = meta;
    this.est = est;
    this.plansHere = plansHere;
    this.planDataYears = planDataYears;
    this.#scratch = scratch;
    this.#lease = scratch.lease;
    return this;
  }

  check(): void {
    if (this.#scratch === null) throw new InvariantError('an APTC page model was read before any estimate');
    this.#scratch.check(this.#lease, 'an APTC page model');
  }

  /** Which wording describes the benchmark; the benchmark-only one ends with the state. */
  get wording(): (typeof BENCHMARK_WORDS)[keyof typeof BENCHMARK_WORDS] {
    const source = this.est.benchmark_source;
    return source === 'benchmark_only' ? BENCHMARK_WORDS.benchmarkOnly : source === null ? BENCHMARK_WORDS.none : BENCHMARK_WORDS.plan;
  }

  /** The years a page without plan data links to: none when this year has the state's plans. */
  get linkedYears(): readonly number[] {
    return this.plansHere ? NO_YEARS : this.planDataYears;
  }

  /** The benchmark table cited: for premiums priced from it (benchmark-only or modeled). */
  get benchmarkData(): BenchmarkData | null {
    const source = this.est.benchmark_source;
    return source === 'benchmark_only' || source === 'modeled' ? benchmarkDataOf(this.yd.ds.manifest) : null;
  }

  /** The self link's href with `year` set to `year` (the link to the same estimate in another year). */
  hrefInYear(year: number): string {
    return `${this.baseUrl}/v1/health/plans/aptc-estimate${echoQuery(this.selfOrder, withYear(this.meta.raw, year))}`;
  }

  /** The body as objects of its own: nothing in it is the scratch's, so the caller may keep it. */
  toBody(): Record<string, unknown> {
    this.check();
    const { est, params: p, where } = this;
    const loc = locationFields(where);
    const linked = this.linkedYears;
    const words = this.wording;
    const place = `${loc.county}, ${loc.state} (${ratingAreaLabel(where.loc.ratingArea)})`;
    return {
      _links: {
        self: {
          href: `${this.baseUrl}/v1/health/plans/aptc-estimate${echoQuery(this.selfOrder, this.meta.raw)}`,
          type: 'application/json',
        },
        // A state without plan data in the build has no search to link to (it would answer 404).
        ...(this.plansHere
          ? {
              search: {
                href: `${this.baseUrl}/v1/health/plans?zip=${p.zip}&income=${p.household_income}&household_size=${p.household_size}{&age}`,
                templated: true,
              },
            }
          : {}),
        ...(linked.length > 0 ? { plan_data_years: linked.map((y) => ({ href: this.hrefInYear(y), title: `PY${y}` })) } : {}),
      },
      aptc_amount: est.aptc_amount,
      // No benchmark at all (no silver plan and no benchmark table value here): the engine's note says so.
      benchmark_premium: est.benchmark_premium ?? 0,
      benchmark_ehb_premium: est.benchmark_ehb_premium,
      benchmark_ehb_share: est.benchmark_ehb_share,
      benchmark_plan_description: `${words.before}${place}${words.after}${words === BENCHMARK_WORDS.benchmarkOnly ? loc.state : ''}`,
      benchmark_plan_id: est.benchmark_plan_id,
      household: {
        income: p.household_income,
        size: p.household_size,
        fpl_amount: est.fpl_amount,
        fpl_percentage: est.fpl_percentage_truncated,
        fpl_percentage_exact: est.fpl_percentage,
        fpl_band: est.band_label,
        applicable_percentage: est.applicable_percentage,
        expected_yearly_contribution: est.yearly_contribution,
        expected_monthly_contribution: est.monthly_contribution,
      },
      members: est.members.map((m) => ({
        age: m.age,
        slcsp_premium: m.slcsp_premium,
        counted_in_benchmark: m.counted_in_benchmark,
        premium_basis: m.premium_basis,
      })),
      location: loc,
      eligible: est.eligible,
      benchmark_source: est.benchmark_source,
      csr_level: est.csr_level,
      csr_band: est.csr_band_label,
      lcsp_plan_id: est.lowest_silver?.plan_id ?? null,
      lcsp_premium: est.lowest_silver?.premium ?? null,
      lcbp_plan_id: est.lowest_bronze?.plan_id ?? null,
      lcbp_premium: est.lowest_bronze?.premium ?? null,
      notes: [...est.notes],
      plan_year: p.year,
      plan_data_years: this.planDataYears,
      benchmark_data: this.benchmarkData,
      data_source: this.yd.dataSource(where.loc.state),
      data_freshness: this.yd.freshness(where.loc.state),
    };
  }
}

/** The request's raw values with `year` replaced: the same estimate asked of another year. */
export function withYear(raw: QueryValues, year: number): QueryValues {
  const y = String(year);
  return { get: (name) => (name === 'year' ? y : raw.get(name)) };
}
