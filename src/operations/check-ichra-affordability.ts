/**
 * @module `GET /v1/health/ichra/affordability`: whether an individual-coverage HRA offer is affordable
 * for an employee (26 CFR 1.36B-2(c)(5)). The test prices the employee's self-only lowest-cost silver
 * plan (LCSP) at the ZIP the employer uses: the residence, or the primary worksite. An affordable offer
 * bars the employee from the premium tax credit; an unaffordable one lets the employee opt out and claim
 * it. The engine: src/engine/ichra.ts.
 */
import { ichraAffordability } from '../engine/ichra.ts';
import { statePremiums } from '../engine/manifest.ts';
import { LOCATION } from './estimate-aptc.ts';
import { locationFields, resolveLocation, type LocationParams } from './location.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { notFound, type ProblemError } from './problems.ts';
import { compileQuery } from './query.ts';
import { HAL_LINK, HOUSEHOLD_INCOME, LABELS, P } from './shared-schemas.ts';

interface Params extends LocationParams {
  age: number;
  household_income: number;
  hra_monthly: number;
}

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      zip: {
        ...P.zip,
        description: '5-digit ZIP code of the employee’s residence, or of the primary worksite if the employer tests there',
      },
      age: { ...P.age, description: 'The employee’s age (64 and above priced at the age-64 rate)' },
      household_income: HOUSEHOLD_INCOME('Annual household income of the employee, dollars (alias income)'),
      hra_monthly: {
        type: 'number',
        minimum: 0,
        maximum: 100_000,
        description: 'Monthly self-only HRA amount the employer offers the employee, dollars (rounded to cents)',
      },
      year: P.year,
      county_fips: P.county_fips,
    },
    required: ['zip', 'age', 'household_income', 'hra_monthly'],
  },
  aliases: { income: 'household_income' },
});

const dollars = (description: string) => ({ type: 'number', description }) as const;

export const ICHRA_RESPONSE = {
  type: 'object',
  properties: {
    _links: {
      type: 'object',
      description: 'HAL links: self, lcsp_plan (the lowest-cost silver plan’s detail)',
      properties: { self: HAL_LINK, lcsp_plan: HAL_LINK },
      required: ['self', 'lcsp_plan'],
      additionalProperties: false,
    },
    affordable: {
      type: 'boolean',
      description:
        'True when employee_cost is at most affordability_threshold: the employee then cannot claim the premium tax credit instead of the HRA',
    },
    lcsp_plan_id: { type: 'string', description: 'Plan variant ID of the lowest-cost silver plan for the employee alone at this location' },
    lcsp_plan_name: { type: 'string', description: 'Its marketing name' },
    lcsp_premium: dollars(
      'Its monthly premium for the employee alone at the employee’s age, dollars (modeled when premium_source is modeled)',
    ),
    hra_monthly: dollars('The monthly HRA amount tested, dollars'),
    employee_cost: dollars('lcsp_premium minus hra_monthly, at least 0: what the employee would still pay each month, dollars'),
    household_income: dollars('Annual household income given, dollars'),
    required_contribution_percentage: {
      type: 'number',
      description: 'The plan year’s required contribution percentage (percent units): 8.39 for 2024, 9.02 for 2025, 9.96 for 2026',
    },
    affordability_threshold: dollars(
      'household_income × required_contribution_percentage ÷ 12, dollars per month, rounded to cents (the test compares unrounded)',
    ),
    min_affordable_hra: dollars(
      'The smallest monthly HRA amount that makes the offer affordable at this income, dollars; 0 when any amount does',
    ),
    age: { type: 'integer', description: 'The employee’s age given' },
    location: { ...LOCATION, description: 'Where the lowest-cost silver plan was priced' },
    premium_source: {
      type: 'string',
      enum: ['rate_puf', 'modeled'],
      description: 'How the state’s premiums were obtained: rate_puf (issuer rates) or modeled (from SLCSP benchmark data: an estimate)',
    },
    notes: { type: 'array', items: { type: 'string' }, description: 'Caveats of the test in words' },
    plan_year: { type: 'integer', description: 'Plan year whose premiums and percentage were used' },
    ...LABELS,
  },
  required: [
    '_links',
    'affordable',
    'lcsp_plan_id',
    'lcsp_plan_name',
    'lcsp_premium',
    'hra_monthly',
    'employee_cost',
    'household_income',
    'required_contribution_percentage',
    'affordability_threshold',
    'min_affordable_hra',
    'age',
    'location',
    'premium_source',
    'notes',
    'plan_year',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

/** Always said: what the test prices and what it leaves out. */
const NOTE_SCOPE =
  'The test prices the employee alone (self-only coverage) at the full premium of the lowest-cost silver plan; the options to disregard wellness incentives and to use the prior year’s premium for non-calendar plan years are not applied';
const NOTE_MODELED =
  'Premiums are modeled from published SLCSP benchmarks (no Rate PUF loaded), so the lowest-cost silver plan and its premium are estimates';

/** A location whose plan list has no silver plan on the exchange for this age: nothing to test against. */
function noSilverPlan(county: string, state: string, age: number, year: number): ProblemError {
  return notFound(
    `No silver plan is sold on the exchange at age ${age} in ${county}, ${state} in ${year}: the lowest-cost silver plan the test needs does not exist here.`,
  );
}

export const checkIchraAffordabilityOperation = defineOperation({
  id: 'checkIchraAffordability',
  toolName: 'check_ichra_affordability',
  path: '/v1/health/ichra/affordability',
  summary: 'Test an ICHRA offer for affordability',
  description:
    'Whether an individual-coverage HRA is affordable for an employee (26 CFR 1.36B-2(c)(5)): the monthly premium of the lowest-cost silver plan for the employee alone, at the employee’s age and ZIP, less the monthly HRA, compared with the plan year’s required contribution percentage × household income ÷ 12. Answers the plan, the threshold, the verdict and the smallest affordable HRA.',
  tier: 'pro',
  tierDetail: 'ICHRA affordability tests require a Pro subscription.',
  query: QUERY,
  pathParams: [],
  responseSchema: ICHRA_RESPONSE,
  handle(ctx, p, meta) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const hraCents = Math.round(p.hra_monthly * 100);
    const test = ichraAffordability(yd.ds, yd.rules, where.loc, { age: p.age, income: p.household_income, hraCents });
    if (test === null) throw noSilverPlan(where.loc.countyName, where.loc.state, p.age, p.year);
    const source = statePremiums(yd.ds.manifest, where.loc.state);
    const plan = yd.ds.plan(test.lcspPlan);
    return {
      _links: {
        self: { href: `${ctx.baseUrl}/v1/health/ichra/affordability${echoQuery(QUERY.order, meta.raw)}`, type: 'application/json' },
        lcsp_plan: { href: `${ctx.baseUrl}/v1/health/plans/${test.lcspId}-01?year=${p.year}`, type: 'application/json' },
      },
      affordable: test.affordable,
      lcsp_plan_id: `${test.lcspId}-01`,
      lcsp_plan_name: plan.name,
      lcsp_premium: test.lcspCents / 100,
      hra_monthly: hraCents / 100,
      employee_cost: test.employeeCostCents / 100,
      household_income: p.household_income,
      required_contribution_percentage: test.requiredContributionPct,
      affordability_threshold: test.thresholdCents / 100,
      min_affordable_hra: test.minAffordableHraCents / 100,
      age: p.age,
      location: locationFields(where),
      premium_source: source,
      notes: source === 'modeled' ? [NOTE_SCOPE, NOTE_MODELED] : [NOTE_SCOPE],
      plan_year: p.year,
      data_source: yd.dataSource(where.loc.state),
      data_freshness: yd.freshness(where.loc.state),
    };
  },
});
