/** @module `GET /v1/health/plans/{plan_id}`: the full detail record of a plan variant. */
import { PLAN_VARIANT_ID, STANDARD_COMPONENT_ID, type PlanVariantRecord } from '../engine/plan-record.ts';
import type { YearData } from './data-registry.ts';
import { defineOperation } from './operation.ts';
import { notFound } from './problems.ts';
import { compileQuery } from './query.ts';
import { LABELS, LINKS_OF, NULLABLE_NUMBER, P, PLAN_SUMMARY } from './shared-schemas.ts';

interface Params {
  plan_id: string;
  year: number;
}

/**
 * The record of a plan id: a variant id, or a 14-character standard component id resolved to its `-01`
 * variant. Any other shape is simply not found (the contract documents no 400 for it).
 */
export function findPlan(yd: YearData, planId: string): PlanVariantRecord {
  const id = STANDARD_COMPONENT_ID.test(planId) ? `${planId}-01` : planId;
  const rec = PLAN_VARIANT_ID.test(id) ? yd.ds.planRecord(id) : undefined;
  if (rec === undefined) throw notFound(`Plan ${planId} not found.`);
  return rec;
}

const MONEY_SET = (keys: readonly string[]) => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, NULLABLE_NUMBER])),
  required: keys,
  additionalProperties: false,
});
const TIER_KEYS = ['individual_tier1', 'individual_tier2', 'family_tier1', 'family_tier2', 'individual_oon', 'family_oon'] as const;
const SBC = {
  type: 'object',
  properties: {
    deductible: NULLABLE_NUMBER,
    copayment: NULLABLE_NUMBER,
    coinsurance: NULLABLE_NUMBER,
    limit: NULLABLE_NUMBER,
    total: NULLABLE_NUMBER,
  },
  required: ['deductible', 'copayment', 'coinsurance', 'limit', 'total'],
  additionalProperties: false,
} as const;

export const PLAN_DETAIL_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'collection'], ['self', 'collection']),
    id: { type: 'string' },
    standard_component_id: { type: 'string' },
    name: { type: 'string' },
    issuer: { type: 'string' },
    state: { type: 'string' },
    metal_level: PLAN_SUMMARY.properties.metal_level,
    plan_type: PLAN_SUMMARY.properties.plan_type,
    service_area_id: { type: 'string' },
    hsa_eligible: { type: 'boolean' },
    national_network: { type: 'boolean' },
    deductible: MONEY_SET(TIER_KEYS),
    max_out_of_pocket: MONEY_SET([...TIER_KEYS, 'combined_individual', 'combined_family']),
    sbc_scenarios: {
      type: 'object',
      properties: { having_baby: SBC, having_diabetes: SBC, simple_fracture: SBC },
      required: ['having_baby', 'having_diabetes', 'simple_fracture'],
      additionalProperties: false,
    },
    links: PLAN_SUMMARY.properties.links,
    issuer_id: { type: 'string' },
    csr_variation: { type: 'string' },
    network_id: { type: ['string', 'null'] },
    formulary_id: { type: ['string', 'null'] },
    referral_required_for_specialist: { type: 'boolean' },
    out_of_country_coverage: { type: 'boolean' },
    out_of_service_area_coverage: { type: 'boolean' },
    plan_year: { type: 'integer' },
    ...LABELS,
  },
  required: [
    '_links',
    'id',
    'standard_component_id',
    'name',
    'issuer',
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
    'Full plan record: cost sharing by network tier, SBC coverage examples, links. A 14-character standard component ID resolves to its on-exchange standard variant (-01).',
  tier: 'pro',
  tierDetail: 'Plan details require a Pro subscription.',
  query: compileQuery<Params>({
    schema: {
      type: 'object',
      properties: { plan_id: { type: 'string', description: 'Plan variant ID, e.g. 21989AK0030001-01' }, year: P.year },
      required: ['plan_id'],
    },
  }),
  pathParams: ['plan_id'],
  responseSchema: PLAN_DETAIL_RESPONSE,
  cacheable: true,
  handle(ctx, p) {
    const yd = ctx.registry.get(p.year)!;
    const r = findPlan(yd, p.plan_id);
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
      issuer: r.issuer,
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
      plan_year: p.year,
      data_source: yd.dataSource(r.state),
      data_freshness: yd.dataFreshness,
    };
  },
});
