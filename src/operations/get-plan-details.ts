/** @module `GET /v1/health/plans/{plan_id}`: the full detail record of a plan variant. */
import { PLAN_VARIANT_ID, stateOfPlanId, variantIdOf, type PlanVariantRecord } from '../engine/plan-record.ts';
import type { DataRegistry, YearData } from './data-registry.ts';
import { planDataYears } from './plan-data-years.ts';
import { issuerFields } from './issuer-fields.ts';
import { JURISDICTIONS } from './list-issuers.ts';
import { locationFields, noPlanData, resolveLocation } from './location.ts';
import { quoteHousehold } from './household-quote.ts';
import { creditCentsFor } from './plan-summary-row.ts';
import { CREDIT_ESTIMATE, householdAptc, householdRules, pricedAges, SEARCH_FILTER_PROPERTIES } from './search-plans.ts';
import type { RequestScratch } from './request-scratch.ts';
import { defineOperation } from './operation.ts';
import { notFound } from './problems.ts';
import { compileQuery } from './query.ts';
import { HOUSEHOLD_AGES, LABELS, memberBreakdown, LINKS_OF, NULLABLE_NUMBER, P, PLAN_SUMMARY, PRICED_AT } from './shared-schemas.ts';

interface Params {
  plan_id: string;
  year: number;
  /** Pricing: a location and one age or a household, optionally with the credit's income. */
  zip?: string;
  county_fips?: string;
  age?: number;
  ages?: number[];
  income?: number;
  household_size?: number;
}

/** What the detail answers when asked to price the plan. */
const PRICING = {
  type: 'object',
  description:
    'Only when zip and age (or ages) are given: the plan’s monthly premium there for that age or household, with each member’s share',
  properties: {
    zip: { type: 'string', description: 'The ZIP code priced' },
    county_fips: PRICED_AT.county_fips,
    rating_area: PRICED_AT.rating_area,
    premium: {
      type: 'number',
      description: 'Monthly premium, dollars: the household’s total with ages (modeled when data_source says so)',
    },
    premium_with_credit: {
      ...NULLABLE_NUMBER,
      description:
        'Monthly premium less the estimated APTC for the household (never below 0; the credit does not pay the non-EHB share); null without income and household_size',
    },
    aptc_amount: {
      ...NULLABLE_NUMBER,
      description: 'The household’s estimated monthly APTC, dollars; null without income and household_size',
    },
    members: memberBreakdown('Each member priced (the one age, or ages in their order), with their share of the premium'),
  },
  required: ['zip', 'county_fips', 'rating_area', 'premium', 'premium_with_credit', 'aptc_amount', 'members'],
  additionalProperties: false,
} as const;

/**
 * The record of a plan id: a variant id, or a 14-character standard component id resolved to its `-01`
 * variant. Any other shape is simply not found (the public API documents no 400 for it:
 * docs/compatibility.md#plan-detail). Detail, compare and the OOP estimate all look plans up here, so
 * they answer an unknown plan alike.
 */
export function findPlan(yd: YearData, planId: string, registry?: DataRegistry): PlanVariantRecord {
  const id = variantIdOf(planId);
  const rec = PLAN_VARIANT_ID.test(id) ? yd.ds.planRecord(id) : undefined;
  if (rec !== undefined) return rec;
  // A plan ID names its state (letters 6–7): one of a state without plan data gets that state's 404,
  // the answer its ZIP gets, rather than a "not found" that reads as a wrong ID.
  const state = stateOfPlanId(planId);
  if (state !== undefined && JURISDICTIONS.has(state) && !yd.statesWithPlans.has(state)) {
    throw noPlanData(state, yd.year, '', registry === undefined ? null : planDataYears(registry, state));
  }
  throw notFound(`Plan ${planId} not found.`);
}

/** What each amount of a deductible or out-of-pocket set is for (CMS plan attributes' network tiers). */
const TIER_MEANING: Readonly<Record<string, string>> = {
  individual_tier1: 'one person, in-network tier 1',
  individual_tier2: 'one person, in-network tier 2 (plans with two network tiers)',
  family_tier1: 'a family, in-network tier 1',
  family_tier2: 'a family, in-network tier 2',
  individual_oon: 'one person, out of network',
  family_oon: 'a family, out of network',
  combined_individual: 'one person, in and out of network combined',
  combined_family: 'a family, in and out of network combined',
};

const MONEY_SET = (keys: readonly string[], what: string) => ({
  type: 'object',
  description: `${what} in dollars by network tier; null where the plan does not state one`,
  properties: Object.fromEntries(keys.map((k) => [k, { ...NULLABLE_NUMBER, description: `${what}, ${TIER_MEANING[k] ?? k}` }])),
  required: keys,
  additionalProperties: false,
});
const TIER_KEYS = ['individual_tier1', 'individual_tier2', 'family_tier1', 'family_tier2', 'individual_oon', 'family_oon'] as const;
const SBC = {
  type: 'object',
  description: 'The plan’s Summary of Benefits and Coverage example: what the patient pays, in dollars; null when the plan gives none',
  properties: {
    deductible: { ...NULLABLE_NUMBER, description: 'Paid toward the deductible' },
    copayment: { ...NULLABLE_NUMBER, description: 'Paid in copayments' },
    coinsurance: { ...NULLABLE_NUMBER, description: 'Paid in coinsurance' },
    limit: { ...NULLABLE_NUMBER, description: 'Paid for what the plan limits or excludes' },
    total: { ...NULLABLE_NUMBER, description: 'Total the patient pays in the example' },
  },
  required: ['deductible', 'copayment', 'coinsurance', 'limit', 'total'],
  additionalProperties: false,
} as const;

export const PLAN_DETAIL_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'collection'], ['self', 'collection']),
    id: PLAN_SUMMARY.properties.id,
    standard_component_id: { type: 'string', description: '14-character plan ID shared by all variants of the plan' },
    name: PLAN_SUMMARY.properties.name,
    issuer: PLAN_SUMMARY.properties.issuer,
    issuer_note: PLAN_SUMMARY.properties.issuer_note,
    state: PLAN_SUMMARY.properties.state,
    metal_level: PLAN_SUMMARY.properties.metal_level,
    plan_type: PLAN_SUMMARY.properties.plan_type,
    service_area_id: { type: 'string', description: 'Issuer’s service area ID: the counties or ZIPs where the plan is sold' },
    hsa_eligible: PLAN_SUMMARY.properties.hsa_eligible,
    national_network: PLAN_SUMMARY.properties.national_network,
    deductible: MONEY_SET(TIER_KEYS, 'Yearly deductible'),
    max_out_of_pocket: MONEY_SET([...TIER_KEYS, 'combined_individual', 'combined_family'], 'Yearly out-of-pocket maximum'),
    sbc_scenarios: {
      type: 'object',
      description: 'The three standard SBC coverage examples',
      properties: {
        having_baby: {
          ...SBC,
          description: `Having a baby (9 months of in-network prenatal care and a hospital delivery). ${SBC.description}`,
        },
        having_diabetes: { ...SBC, description: `Managing type 2 diabetes (a year of routine in-network care). ${SBC.description}` },
        simple_fracture: { ...SBC, description: `A simple fracture (emergency room visit and follow-up care). ${SBC.description}` },
      },
      required: ['having_baby', 'having_diabetes', 'simple_fracture'],
      additionalProperties: false,
    },
    links: PLAN_SUMMARY.properties.links,
    issuer_id: { type: 'string', description: '5-digit HIOS issuer ID' },
    csr_variation: {
      type: 'string',
      description: 'CMS cost-sharing variation of this variant, e.g. "Standard Silver On Exchange Plan" or "Silver Plan 87% AV Level"',
    },
    network_id: { type: ['string', 'null'], description: 'Issuer’s provider network ID, or null' },
    formulary_id: { type: ['string', 'null'], description: 'Issuer’s drug formulary ID, or null' },
    referral_required_for_specialist: { type: 'boolean', description: 'Whether seeing a specialist needs a referral' },
    out_of_country_coverage: { type: 'boolean', description: 'Whether care outside the United States is covered' },
    out_of_service_area_coverage: { type: 'boolean', description: 'Whether care outside the plan’s service area is covered' },
    pricing: PRICING,
    plan_year: { type: 'integer', description: 'Plan year of this plan record' },
    ...LABELS,
  },
  required: [
    '_links',
    'id',
    'standard_component_id',
    'name',
    'issuer',
    'issuer_note',
    'state',
    'metal_level',
    'plan_type',
    'service_area_id',
    'hsa_eligible',
    'national_network',
    'deductible',
    'max_out_of_pocket',
    'sbc_scenarios',
    'links',
    'issuer_id',
    'csr_variation',
    'network_id',
    'formulary_id',
    'referral_required_for_specialist',
    'out_of_country_coverage',
    'out_of_service_area_coverage',
    'plan_year',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const getPlanDetailsOperation = defineOperation({
  id: 'getPlanById',
  toolName: 'get_plan_details',
  path: '/v1/health/plans/{plan_id}',
  summary: 'Get plan detail',
  description:
    'Full plan record: cost sharing by network tier, SBC coverage examples, links. A 14-character standard component ID resolves to its on-exchange standard variant (-01). With zip and age (or a household’s ages), also the premium there with each member’s share, and with income and household_size the premium after the estimated credit.',
  tier: 'pro',
  tierDetail: 'Plan details require a Pro subscription.',
  query: compileQuery<Params>({
    schema: {
      type: 'object',
      properties: {
        plan_id: { type: 'string', description: 'Plan variant ID, e.g. 21989AK0030001-01' },
        year: P.year,
        zip: { ...P.zip, description: 'Price the plan at this ZIP code (with age or ages)' },
        county_fips: P.county_fips,
        age: { ...P.age, description: `${P.age.description}. Prices the plan (with zip)` },
        ages: {
          ...HOUSEHOLD_AGES,
          description: HOUSEHOLD_AGES.description.replace(/^Pro\. /, '').replace('instead of age', 'instead of age (with zip)'),
        },
        income: SEARCH_FILTER_PROPERTIES.income,
        household_size: SEARCH_FILTER_PROPERTIES.household_size,
      },
      required: ['plan_id'],
    },
    lists: ['ages'],
    exclusive: [['age', 'ages']],
  }),
  pathParams: ['plan_id'],
  responseSchema: PLAN_DETAIL_RESPONSE,
  cacheable: true,
  check: (p) => {
    const errors = [...householdRules(p)];
    const priced = p.age !== undefined || p.ages !== undefined;
    if (priced && p.zip === undefined) errors.push({ field: 'zip', message: 'Required with age or ages' });
    if (!priced && p.zip !== undefined) errors.push({ field: 'age', message: 'Required with zip (or give ages)' });
    for (const name of ['county_fips', 'income'] as const)
      if (p[name] !== undefined && !priced) errors.push({ field: name, message: 'Only with zip and age (or ages)' });
    return errors;
  },
  handle(ctx, p, _meta, scratch) {
    const yd = ctx.registry.get(p.year)!;
    const r = findPlan(yd, p.plan_id, ctx.registry);
    const pricing = p.zip === undefined ? undefined : priceDetail(yd, r, { ...p, zip: p.zip }, scratch);
    const tiers = (d: PlanVariantRecord['deductible']) => ({
      individual_tier1: d.individual_tier1,
      individual_tier2: d.individual_tier2,
      family_tier1: d.family_tier1,
      family_tier2: d.family_tier2,
      individual_oon: d.individual_oon,
      family_oon: d.family_oon,
    });
    return {
      _links: {
        self: { href: `${ctx.baseUrl}/v1/health/plans/${r.id}?year=${p.year}`, type: 'application/json' },
        collection: { href: `${ctx.baseUrl}/v1/health/plans{?zip,age,year}`, templated: true },
      },
      id: r.id,
      standard_component_id: r.standard_component_id,
      name: r.name,
      ...issuerFields(r),
      state: r.state,
      metal_level: r.metal_level,
      plan_type: r.plan_type,
      service_area_id: r.service_area_id,
      hsa_eligible: r.hsa_eligible,
      national_network: r.national_network,
      deductible: tiers(r.deductible),
      max_out_of_pocket: {
        ...tiers(r.max_out_of_pocket),
        combined_individual: r.max_out_of_pocket.combined_individual,
        combined_family: r.max_out_of_pocket.combined_family,
      },
      sbc_scenarios: r.sbc_scenarios,
      links: r.links,
      issuer_id: r.issuer_id,
      csr_variation: r.csr_variation,
      network_id: r.network_id,
      formulary_id: r.formulary_id,
      referral_required_for_specialist: r.referral_required_for_specialist,
      out_of_country_coverage: r.out_of_country_coverage,
      out_of_service_area_coverage: r.out_of_service_area_coverage,
      pricing,
      plan_year: p.year,
      data_source: yd.dataSource(r.state),
      data_freshness: yd.freshness(r.state),
    };
  },
});

/** The pricing member of a detail asked for a location and an age or household. */
function priceDetail(yd: YearData, r: PlanVariantRecord, p: Params & { zip: string }, scratch: RequestScratch): Record<string, unknown> {
  const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true });
  const index = yd.ds.planIndex(r.standard_component_id)!;
  const quote = quoteHousehold(yd, where, index, r.id, pricedAges(p));
  const aptc = householdAptc(yd, where.loc, p, scratch.part(CREDIT_ESTIMATE));
  const parts = yd.catalog.get(index, r.variant);
  const credit = creditCentsFor(quote.totalCents, aptc, r.metal_level, parts?.ehb_share ?? null);
  return {
    zip: p.zip,
    county_fips: where.loc.countyFips,
    rating_area: locationFields(where).rating_area,
    premium: quote.totalCents / 100,
    premium_with_credit: credit < 0 ? null : credit / 100,
    aptc_amount: aptc,
    members: quote.members,
  };
}
