/**
 * @module `GET /v1/health/plans/aptc-estimate`: the monthly premium tax credit of a household, with the
 * working shown (FPL, %FPL, band, applicable %, contribution, per-member benchmark premiums). Works in
 * every state the benchmark table prices: geography and benchmarks are national, so states without plan
 * data use the benchmark table, labelled as an approximation (README, "States without plan data").
 */
import type { Mutable } from '../engine/mutable.ts';
import { AptcEstimateRecord, estimateAptcInto, type AptcInput } from '../engine/subsidy.ts';
import { ratingAreaLabel } from './data-registry.ts';
import { AptcPageModel } from './aptc-page.ts';
import { hasPublishedBenchmark, noPlanData, resolveLocation, type LocationParams } from './location.ts';
import { defineOperation } from './operation.ts';
import { scratchPart } from './request-scratch.ts';
import { NO_ERRORS } from './problems.ts';
import { compileQuery } from './query.ts';
import { BENCHMARK_DATA } from './benchmark-data.ts';
import { PLAN_DATA_YEAR_LINKS, PLAN_DATA_YEARS, planDataYears } from './plan-data-years.ts';
import {
  HOUSEHOLD_INCOME,
  householdMembers,
  LABELS,
  LINKS_OF,
  memberPremiumBasis,
  NULLABLE_NUMBER,
  P,
  PRICED_AT,
} from './shared-schemas.ts';

interface Params extends LocationParams {
  household_income: number;
  household_size: number;
  ages: number[];
}

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      zip: P.zip,
      household_income: HOUSEHOLD_INCOME('Annual gross household income, dollars (alias income)'),
      household_size: { type: 'integer', minimum: 1, maximum: 20, description: 'Members of the tax household, for the poverty guideline' },
      ages: {
        type: 'array',
        items: { type: 'integer', minimum: 0, maximum: 65 },
        minItems: 1,
        maxItems: 20,
        description: 'Comma-separated ages of the members seeking coverage',
      },
      year: P.year,
      county_fips: P.county_fips,
    },
    required: ['zip', 'household_income', 'household_size', 'ages'],
  },
  aliases: { income: 'household_income' },
  lists: ['ages'],
});

export const LOCATION = {
  type: 'object',
  description: 'Where the benchmark was priced',
  properties: {
    zip: { type: 'string', description: 'The ZIP code given' },
    state: { type: 'string', description: 'Two-letter state code' },
    county: PRICED_AT.county,
    county_fips: PRICED_AT.county_fips,
    rating_area: PRICED_AT.rating_area,
    multiple_areas: PRICED_AT.multiple_areas,
  },
  required: ['zip', 'state', 'county', 'county_fips', 'rating_area', 'multiple_areas'],
  additionalProperties: false,
} as const;

export const APTC_RESPONSE = {
  type: 'object',
  properties: {
    _links: {
      ...LINKS_OF(['self', 'search']),
      properties: { ...LINKS_OF(['self', 'search']).properties, plan_data_years: PLAN_DATA_YEAR_LINKS },
      description: `${LINKS_OF(['self', 'search']).description}; plan_data_years (this estimate in each year with plan data for the state, when this year has none)`,
    },
    aptc_amount: {
      type: 'number',
      description:
        'Estimated advance premium tax credit, dollars per month: benchmark_premium minus the expected monthly contribution, at least 0; 0 when not eligible',
    },
    benchmark_premium: {
      type: 'number',
      description:
        'Monthly premium of the benchmark (second-lowest-cost silver plan) for the members counted, dollars; an approximation when benchmark_source is benchmark_only, modeled when modeled, 0 when benchmark_source is null (no benchmark here)',
    },
    benchmark_ehb_premium: {
      ...NULLABLE_NUMBER,
      description:
        'The part of benchmark_premium for essential health benefits, dollars per month: the credit is benchmark_ehb_premium minus the expected monthly contribution (26 U.S.C. §36B(b)(3)(D)). Null when the benchmark plan puts its whole premium toward essential health benefits or states no share (then benchmark_premium counts in full)',
    },
    benchmark_ehb_share: {
      ...NULLABLE_NUMBER,
      description:
        'The benchmark plan’s share of its premium for essential health benefits, 0–1 (CMS Plan Attributes EHBPercentTotalPremium); null with benchmark_ehb_premium',
    },
    benchmark_plan_description: {
      type: 'string',
      description: 'What the benchmark is, in words (an approximation when benchmark_source is benchmark_only)',
    },
    benchmark_plan_id: { type: ['string', 'null'], description: 'Plan variant ID of the benchmark plan; null when no plan data gives one' },
    household: {
      type: 'object',
      description: 'The household and its expected contribution under the plan year’s rules',
      properties: {
        income: { type: 'number', description: 'Yearly household income given, dollars' },
        size: { type: 'integer', description: 'People in the tax household' },
        fpl_amount: {
          type: 'number',
          description: 'Federal poverty guideline for this household size used by the plan year, dollars per year',
        },
        fpl_percentage: {
          type: 'integer',
          description:
            'Income as a percentage of the poverty guideline as the calculation uses it: decimals dropped, 401 when income is above 400 % (Form 8962 line 5)',
        },
        fpl_percentage_exact: {
          type: 'number',
          description:
            'Income ÷ poverty guideline × 100 to 2 decimals, for reference only: the bands and the applicable percentage use fpl_percentage',
        },
        fpl_band: {
          type: ['string', 'null'],
          description:
            'Band of the applicable-percentage table fpl_percentage falls in, lower end included: "under 150%", "150% to under 200%", "300% to 400%" (400 included where the table ends there), "400% and over"; null when not eligible',
        },
        applicable_percentage: {
          ...NULLABLE_NUMBER,
          description: 'Share of income the household is expected to pay toward the benchmark (percent units); null when not eligible',
        },
        expected_yearly_contribution: { type: 'number', description: 'Income × applicable percentage, whole dollars per year' },
        expected_monthly_contribution: { type: 'number', description: 'The yearly contribution ÷ 12, whole dollars per month' },
      },
      required: [
        'income',
        'size',
        'fpl_amount',
        'fpl_percentage',
        'fpl_percentage_exact',
        'fpl_band',
        'applicable_percentage',
        'expected_yearly_contribution',
        'expected_monthly_contribution',
      ],
      additionalProperties: false,
    },
    members: householdMembers('Each member seeking coverage, in the order of ages, and their share of the benchmark', {
      slcsp_premium: { type: 'number', description: 'The member’s monthly age-rated benchmark premium, dollars; 0 when not counted' },
      counted_in_benchmark: {
        type: 'boolean',
        description: 'False for children under 21 beyond the three oldest, who add nothing to the benchmark',
      },
      premium_basis: memberPremiumBasis('slcsp_premium'),
    }),
    location: LOCATION,
    eligible: {
      type: 'boolean',
      description: 'Whether the household qualifies for the credit by income (poverty-level range of the plan year)',
    },
    benchmark_source: {
      type: ['string', 'null'],
      enum: ['rate_puf', 'modeled', 'benchmark_only', null],
      description:
        'How the benchmark premium was obtained: rate_puf (issuer rates), modeled (premiums modeled from benchmark data), benchmark_only (published benchmark data alone: no plan data is loaded for the state; an approximation); null when no benchmark is available here (benchmark_premium 0, no credit estimated)',
    },
    csr_level: {
      type: ['integer', 'null'],
      enum: [94, 87, 73, null],
      description:
        'Actuarial value (percent) of the cost-sharing-reduction silver variant the household’s income qualifies for: 94 at 100–150 % FPL, 87 above 150 up to 200 %, 73 above 200 up to 250 %; null above 250 % or when not eligible for the credit',
    },
    csr_band: {
      type: ['string', 'null'],
      enum: ['100% to 150%', 'over 150% to 200%', 'over 200% to 250%', null],
      description:
        'Poverty-level range of csr_level, upper end included and tested on the exact ratio (45 CFR 155.305(g)(2)); null with csr_level',
    },
    lcsp_plan_id: {
      type: ['string', 'null'],
      description: 'Plan variant ID of the household’s lowest-cost silver plan (ranked as the benchmark is); null without plan data here',
    },
    lcsp_premium: {
      ...NULLABLE_NUMBER,
      description:
        'Monthly premium of that plan for the household, dollars (modeled when benchmark_source is modeled); null with lcsp_plan_id',
    },
    lcbp_plan_id: {
      type: ['string', 'null'],
      description:
        'Plan variant ID of the household’s lowest-cost bronze plan (expanded bronze included); null without plan data or bronze plans here',
    },
    lcbp_premium: { ...NULLABLE_NUMBER, description: 'Monthly premium of that plan for the household, dollars; null with lcbp_plan_id' },
    notes: {
      type: 'array',
      items: { type: 'string' },
      description: 'Caveats of the estimate in words (approximations, Medicaid range, cliffs)',
    },
    plan_year: { type: 'integer', description: 'Plan year whose rules and premiums were used' },
    plan_data_years: PLAN_DATA_YEARS,
    benchmark_data: BENCHMARK_DATA,
    ...LABELS,
  },
  required: [
    '_links',
    'aptc_amount',
    'benchmark_premium',
    'benchmark_ehb_premium',
    'benchmark_ehb_share',
    'benchmark_plan_description',
    'household',
    'members',
    'location',
    'eligible',
    'benchmark_source',
    'csr_level',
    'csr_band',
    'lcsp_plan_id',
    'lcsp_premium',
    'lcbp_plan_id',
    'lcbp_premium',
    'notes',
    'plan_year',
    'plan_data_years',
    'benchmark_data',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const estimateAptcOperation = defineOperation({
  id: 'calculateAptc',
  toolName: 'estimate_aptc',
  path: '/v1/health/plans/aptc-estimate',
  summary: 'Estimate the premium tax credit (APTC)',
  description:
    'Monthly APTC for a household: FPL of the plan year (AK and HI tables for those states), %FPL truncated for the band, applicable percentage interpolated and rounded to 0.01 %, contribution in whole dollars (Form 8962), benchmark = second-lowest-cost silver plan for the household with only the three oldest children under 21 rated.',
  tier: 'pro',
  tierDetail: 'APTC estimates require a Pro subscription.',
  query: QUERY,
  pathParams: [],
  responseSchema: APTC_RESPONSE,
  check: (p) => (p.ages.length > p.household_size ? [{ field: 'ages', message: 'More members than household_size' }] : NO_ERRORS),
  handle(ctx, p, meta, scratch) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: false });
    const plansHere = yd.statesWithPlans.has(where.loc.state);
    // Without plan data only the published table can price the benchmark; without it there is no
    // estimate to give, and the state's 404 (as the ZIP lookup says) beats a credit of $0 from nothing.
    if (!plansHere && !hasPublishedBenchmark(yd, where.loc)) {
      throw noPlanData(
        where.loc.state,
        yd.year,
        `, and no published benchmark premium for ${ratingAreaLabel(where.loc.ratingArea)}`,
        planDataYears(ctx.registry, where.loc.state),
      );
    }
    const s = scratch.part(APTC_SCRATCH);
    const input = s.input;
    input.income = p.household_income;
    input.householdSize = p.household_size;
    input.ages = p.ages;
    const est = estimateAptcInto(yd.ds, yd.rules, where.loc, input, s.estimate);
    return s.page.set(scratch, ctx.baseUrl, yd, where, p, meta, est, plansHere, planDataYears(ctx.registry, where.loc.state));
  },
});

/** The page, estimate and input an estimate reuses (aptc-page.ts). */
const APTC_SCRATCH = scratchPart('APTC estimate', () => ({
  page: new AptcPageModel(QUERY.order),
  estimate: new AptcEstimateRecord(),
  input: { income: 0, householdSize: 1, ages: [] } as Mutable<AptcInput>,
}));
