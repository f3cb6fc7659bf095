/** @module `GET /v1/health/plans/{plan_id}/oop-estimate`: yearly cost of a plan for one scenario. */
import { estimateOop, OOP_SCENARIOS, type OopScenario } from '../engine/oop.ts';
import { locationFields, offeredPremium, resolveLocation, type LocationParams } from './location.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { notFound } from './problems.ts';
import { findPlan } from './get-plan-details.ts';
import { compileQuery } from './query.ts';
import { AGE_OR_AGES, HOUSEHOLD_AGES, LABELS, LINKS_OF, memberBreakdown, P, PLAN_SUMMARY, PRICED_AT } from './shared-schemas.ts';
import { quoteHousehold } from './household-quote.ts';

interface Params extends LocationParams {
  plan_id: string;
  /** Exactly one of age and ages (the query's alternatives). */
  age?: number;
  ages?: number[];
  scenario: OopScenario;
}

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      plan_id: { type: 'string', description: 'Plan variant ID' },
      zip: P.zip,
      age: AGE_OR_AGES,
      ages: {
        ...HOUSEHOLD_AGES,
        description:
          'Ages of the household members seeking coverage (comma-separated or repeated; 1–10 members), instead of age: the premium is the household’s total; the care scenario is still one member’s',
      },
      scenario: {
        type: 'string',
        enum: [...OOP_SCENARIOS],
        description: 'having_baby and having_diabetes use the plan’s SBC coverage examples; low, medium and high a documented heuristic',
      },
      year: P.year,
      county_fips: P.county_fips,
    },
    required: ['plan_id', 'zip', 'scenario'],
  },
  lists: ['ages'],
  alternatives: [['age', 'ages']],
});

/** The self link's parameters: `ages` after `age`, so single-age links read as they always have. */
const SELF_ORDER = ['zip', 'age', 'ages', 'scenario', 'year', 'county_fips'];

export const OOP_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'plan'], ['self', 'plan']),
    plan_id: PLAN_SUMMARY.properties.id,
    plan_name: PLAN_SUMMARY.properties.name,
    metal_level: PLAN_SUMMARY.properties.metal_level,
    zip: { type: 'string', description: 'The ZIP code the premium is for' },
    age: { type: ['integer', 'null'], description: 'The applicant age the premium is for; null with ages' },
    ages: { type: 'array', items: { type: 'integer' }, description: 'With ages only: the household the premium is for' },
    members: memberBreakdown('With ages only: each member in the order of ages, with their share of the household premium'),
    county: PRICED_AT.county,
    county_fips: PRICED_AT.county_fips,
    multiple_areas: PRICED_AT.multiple_areas,
    monthly_premium: {
      type: 'number',
      description:
        'Monthly premium in dollars for this age, or the household’s total with ages, at this location (modeled when data_source says so)',
    },
    scenario: {
      type: 'string',
      enum: [...OOP_SCENARIOS],
      description:
        'Care assumed for the year: low, medium or high use (a heuristic), or an SBC coverage example (having_baby, having_diabetes)',
    },
    estimated_annual_cost: {
      type: 'number',
      description:
        'Estimated cost of the year in dollars: twelve premiums plus the estimated out-of-pocket spending (an estimate, not a quote)',
    },
    sbc_data_available: {
      type: 'boolean',
      description: 'True when the out-of-pocket part comes from the plan’s own SBC example; false when the heuristic was used',
    },
    breakdown: {
      type: 'object',
      description: 'How estimated_annual_cost is made up, in dollars',
      properties: {
        annual_premium: { type: 'number', description: 'Twelve monthly premiums' },
        estimated_out_of_pocket: {
          type: 'number',
          description:
            'What the member pays for care: deductible + copays + coinsurance + limits or exclusions, capped at the out-of-pocket maximum',
        },
        deductible_applied: { type: 'number', description: 'Part of the out-of-pocket spending paid toward the deductible' },
        coinsurance_applied: { type: 'number', description: 'Part paid in coinsurance' },
        copay_applied: { type: 'number', description: 'Part paid in copayments' },
        limits_or_exclusions: {
          type: 'number',
          description: 'Part for what the plan limits or excludes (SBC examples only; 0 for the heuristic)',
        },
      },
      required: [
        'annual_premium',
        'estimated_out_of_pocket',
        'deductible_applied',
        'coinsurance_applied',
        'copay_applied',
        'limits_or_exclusions',
      ],
      additionalProperties: false,
    },
    notes: { type: 'array', items: { type: 'string' }, description: 'How the estimate was made and its caveats, in words' },
    plan_year: PRICED_AT.plan_year,
    ...LABELS,
  },
  required: [
    '_links',
    'plan_id',
    'plan_name',
    'metal_level',
    'zip',
    'age',
    'county',
    'county_fips',
    'multiple_areas',
    'monthly_premium',
    'scenario',
    'estimated_annual_cost',
    'sbc_data_available',
    'breakdown',
    'notes',
    'plan_year',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const estimateOutOfPocketOperation = defineOperation({
  id: 'estimateOop',
  toolName: 'estimate_out_of_pocket',
  path: '/v1/health/plans/{plan_id}/oop-estimate',
  summary: 'Estimate yearly out-of-pocket cost',
  description:
    'Premium for a year (one age, or a household’s total with ages) plus the member’s share of a scenario’s care. SBC scenarios sum the plan’s coverage-example columns (sbc_data_available true); low/medium/high are modeled (sbc_data_available false) and capped at the plan’s MOOP.',
  tier: 'pro',
  tierDetail: 'Out-of-pocket estimates require a Pro subscription.',
  query: QUERY,
  pathParams: ['plan_id'],
  responseSchema: OOP_RESPONSE,
  handle(ctx, p, meta) {
    const yd = ctx.registry.get(p.year)!;
    const rec = findPlan(yd, p.plan_id, ctx.registry);
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const quote = p.ages === undefined ? null : quoteHousehold(yd, where, yd.ds.planIndex(rec.standard_component_id)!, rec.id, p.ages);
    const premium = quote === null ? offeredPremium(yd, where, rec.standard_component_id, p.age!) : quote.totalCents / 100;
    if (premium === null) {
      throw notFound(`Plan ${rec.id} is not offered in ZIP ${p.zip}.`);
    }
    const est = estimateOop(rec, premium, p.scenario, yd.rules);
    const loc = locationFields(where);
    const notes = [...est.notes];
    if (quote !== null)
      notes.push(
        'The premium is the household’s; the care scenario is one member’s (deductibles and the out-of-pocket maximum are the individual ones).',
      );
    if (yd.ds.manifest.premiums.source === 'modeled')
      notes.push('Premiums are modeled from SLCSP benchmarks (no Rate PUF loaded), not issuer rates.');
    return {
      _links: {
        self: {
          href: `${ctx.baseUrl}/v1/health/plans/${rec.id}/oop-estimate${echoQuery(SELF_ORDER, meta.raw)}`,
          type: 'application/json',
        },
        plan: { href: `${ctx.baseUrl}/v1/health/plans/${rec.id}?year=${p.year}` },
      },
      plan_id: rec.id,
      plan_name: rec.name,
      metal_level: rec.metal_level,
      zip: p.zip,
      age: p.age ?? null,
      ages: p.ages,
      members: quote?.members,
      county: loc.county,
      county_fips: loc.county_fips,
      multiple_areas: loc.multiple_areas,
      monthly_premium: premium,
      scenario: p.scenario,
      estimated_annual_cost: est.estimated_annual_cost,
      sbc_data_available: est.sbc_data_available,
      breakdown: est.breakdown,
      notes,
      plan_year: p.year,
      data_source: yd.dataSource(where.loc.state),
      data_freshness: yd.freshness(where.loc.state),
    };
  },
});
