/** @module `GET /v1/health/plans/compare`: 2–4 plans side by side at one location and age. */
import { variantIdOf } from '../engine/plan-record.ts';
import { findPlan } from './get-plan-details.ts';
import { locationFields, offeredPremium, resolveLocation, type LocationParams } from './location.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { notFound } from './problems.ts';
import { compileQuery } from './query.ts';
import { AGE_OR_AGES, HOUSEHOLD_AGES, LABELS, LINKS_OF, PRICED_AT, P, PLAN_SUMMARY } from './shared-schemas.ts';
import { creditCentsFor, summaryRow, type PlanSummaryRow } from './plan-summary-row.ts';
import { quoteHousehold, type MemberPremium } from './household-quote.ts';
import { CREDIT_ESTIMATE, householdAptc, householdRules, SEARCH_FILTER_PROPERTIES } from './search-plans.ts';

interface Params extends LocationParams {
  ids: string[];
  /** Exactly one of age and ages (the query's alternatives). */
  age?: number;
  ages?: number[];
  income?: number;
  household_size?: number;
}

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      ids: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        minItems: 2,
        maxItems: 4,
        description: 'Comma-separated plan variant IDs (2–4)',
      },
      zip: P.zip,
      age: AGE_OR_AGES,
      ages: { ...HOUSEHOLD_AGES, description: HOUSEHOLD_AGES.description.replace(/^Pro\. /, '') },
      year: P.year,
      county_fips: P.county_fips,
      income: SEARCH_FILTER_PROPERTIES.income,
      household_size: SEARCH_FILTER_PROPERTIES.household_size,
    },
    required: ['ids', 'zip'],
  },
  lists: ['ids', 'ages'],
  alternatives: [['age', 'ages']],
});

export const COMPARE_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    _embedded: {
      type: 'object',
      description: 'HAL embedded resources',
      properties: {
        plans: { type: 'array', minItems: 2, maxItems: 4, items: PLAN_SUMMARY, description: 'The plans compared, in the order requested' },
      },
      required: ['plans'],
      additionalProperties: false,
    },
    comparison_summary: {
      type: 'object',
      description: 'Which compared plan is lowest on each measure (plan IDs)',
      properties: {
        lowest_premium: { type: 'string', description: 'ID of the plan with the lowest monthly premium' },
        lowest_deductible: {
          type: ['string', 'null'],
          description: 'ID of the plan with the lowest individual deductible; null when none states one',
        },
        lowest_moop: {
          type: ['string', 'null'],
          description: 'ID of the plan with the lowest individual out-of-pocket maximum; null when none states one',
        },
      },
      required: ['lowest_premium', 'lowest_deductible', 'lowest_moop'],
      additionalProperties: false,
    },
    zip: { type: 'string', description: 'The ZIP code the plans are priced at' },
    ...PRICED_AT,
    ...LABELS,
  },
  required: [
    '_links',
    '_embedded',
    'comparison_summary',
    'zip',
    'county_fips',
    'rating_area',
    'plan_year',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const comparePlansOperation = defineOperation({
  id: 'comparePlans',
  toolName: 'compare_plans',
  path: '/v1/health/plans/compare',
  summary: 'Compare 2–4 plans',
  description:
    'Plan summaries in the order of `ids`, priced for one age (or a household: ages, with each member’s share) at one location, with the lowest premium, deductible and MOOP named. Ties go to the plan listed first. With income and household_size, premium_with_credit is the premium less the estimated APTC.',
  tier: 'pro',
  tierDetail: 'Plan comparison requires a Pro subscription.',
  query: QUERY,
  pathParams: [],
  responseSchema: COMPARE_RESPONSE,
  check: (p) => [
    ...(new Set(p.ids.map(variantIdOf)).size !== p.ids.length ? [{ field: 'ids', message: 'Plan IDs must be distinct' }] : []),
    ...householdRules(p),
  ],
  handle(ctx, p, meta, scratch) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const records = p.ids.map((id) => findPlan(yd, id, ctx.registry));
    const aptc = householdAptc(yd, where.loc, p, scratch.part(CREDIT_ESTIMATE));
    const plans = records.map((rec) => {
      const index = yd.ds.planIndex(rec.standard_component_id)!;
      const parts = yd.catalog.get(index, rec.variant);
      let premiumCents: number;
      let members: readonly MemberPremium[] | null = null;
      if (p.ages !== undefined) {
        const quote = quoteHousehold(yd, where, index, rec.id, p.ages);
        premiumCents = quote.totalCents;
        members = quote.members;
      } else {
        const premium = offeredPremium(yd, where, rec.standard_component_id, p.age!);
        // The same answer as the OOP estimate for a plan not sold here (docs/compatibility.md#plan-comparison).
        if (premium === null) throw notFound(`Plan ${rec.id} is not offered in ZIP ${p.zip}.`);
        premiumCents = Math.round(premium * 100);
      }
      if (parts === undefined) throw notFound(`Plan ${rec.id} not found.`);
      return summaryRow(parts, premiumCents, creditCentsFor(premiumCents, aptc, parts.metal_level, parts.ehb_share), members);
    });
    const lowest = (value: (row: PlanSummaryRow) => number | null): string | null => {
      let best: PlanSummaryRow | null = null;
      let bestValue = Infinity;
      for (const row of plans) {
        const v = value(row);
        if (v !== null && v < bestValue) {
          best = row;
          bestValue = v;
        }
      }
      return best === null ? null : best.id;
    };
    const money = (row: PlanSummaryRow, key: 'deductible' | 'max_out_of_pocket'): number | null => row[key].individual;
    const loc = locationFields(where);
    return {
      _links: { self: { href: `${ctx.baseUrl}/v1/health/plans/compare${echoQuery(QUERY.order, meta.raw)}`, type: 'application/json' } },
      _embedded: { plans },
      comparison_summary: {
        lowest_premium: lowest((r) => r.premium)!,
        lowest_deductible: lowest((r) => money(r, 'deductible')),
        lowest_moop: lowest((r) => money(r, 'max_out_of_pocket')),
      },
      zip: loc.zip,
      county: loc.county,
      county_fips: loc.county_fips,
      rating_area: loc.rating_area,
      multiple_areas: loc.multiple_areas,
      plan_year: p.year,
      data_source: yd.dataSource(where.loc.state),
      data_freshness: yd.freshness(where.loc.state),
    };
  },
});
