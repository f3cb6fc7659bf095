/**
 * @module `GET /v1/health/dental/plans/{plan_id}`: the record of a stand-alone dental plan variant.
 * A premium needs a location and an age: search gives it; the detail says whether the
 * state's dental rates are loaded at all.
 */
import type { DentalPlanRecord } from '../engine/dental-record.ts';
import { STANDARD_COMPONENT_ID, stateOfPlanId, variantIdOf } from '../engine/plan-record.ts';
import type { DataRegistry, YearData } from './data-registry.ts';
import { planDataYears } from './plan-data-years.ts';
import {
  DENTAL_LABELS,
  DENTAL_PLAN_PROPERTIES,
  DENTAL_PLAN_REQUIRED,
  dentalLabels,
  dentalPlanFields,
  noDentalRatesNote,
} from './dental-plan-fields.ts';
import { JURISDICTIONS } from './list-issuers.ts';
import { noPlanData } from './location.ts';
import { defineOperation } from './operation.ts';
import { notFound } from './problems.ts';
import { compileQuery } from './query.ts';
import { LINKS_OF, P } from './shared-schemas.ts';

interface Params {
  plan_id: string;
  year: number;
}

/**
 * The dental record of a plan id: a variant id, or a 14-character standard component id resolved to its
 * on-exchange variant (-01), else its off-exchange one (-00). Unknown ids are a 404; an id of a state
 * without plan data gets that state's 404, as a medical plan id does.
 */
export function findDentalPlan(yd: YearData, planId: string, registry?: DataRegistry): DentalPlanRecord {
  const catalog = yd.ds.dental();
  const rec = STANDARD_COMPONENT_ID.test(planId)
    ? (catalog.record(variantIdOf(planId)) ?? catalog.record(`${planId}-00`))
    : catalog.record(planId);
  if (rec !== undefined) return rec;
  const state = stateOfPlanId(planId);
  if (state !== undefined && JURISDICTIONS.has(state) && !yd.statesWithPlans.has(state)) {
    throw noPlanData(state, yd.year, '', registry === undefined ? null : planDataYears(registry, state));
  }
  throw notFound(`Dental plan ${planId} not found.`);
}

export const DENTAL_DETAIL_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'collection'], ['self', 'collection']),
    ...DENTAL_PLAN_PROPERTIES,
    csr_variation: { type: 'string', description: 'CMS variant type, e.g. "Standard High On Exchange Plan"' },
    service_area_id: { type: 'string', description: 'Issuer’s dental service area ID: the counties or ZIPs where the plan is sold' },
    premiums_loaded: {
      type: 'boolean',
      description: 'Whether dental rates (a Rate PUF) are loaded for the plan’s state and year: search then prices the plan by ZIP and age',
    },
    premium_note: { type: ['string', 'null'], description: 'Null when dental rates are loaded; otherwise why search answers premium null' },
    plan_year: { type: 'integer', description: 'Plan year of this plan record' },
    ...DENTAL_LABELS,
  },
  required: [
    '_links',
    ...DENTAL_PLAN_REQUIRED,
    'csr_variation',
    'service_area_id',
    'premiums_loaded',
    'premium_note',
    'plan_year',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const getDentalPlanDetailsOperation = defineOperation({
  id: 'getDentalPlanById',
  toolName: 'get_dental_plan_details',
  path: '/v1/health/dental/plans/{plan_id}',
  summary: 'Get dental plan detail',
  description:
    'The record of a stand-alone dental plan variant: issuer, level (high or low), who may enrol, on or off exchange, pediatric dental EHB share, in-network deductible and out-of-pocket maximum, documents, and whether the state’s dental rates are loaded. A 14-character standard component ID resolves to its -01 variant (or -00 when only that exists).',
  tier: 'free',
  query: compileQuery<Params>({
    schema: {
      type: 'object',
      properties: { plan_id: { type: 'string', description: 'Dental plan variant ID, e.g. 86545CT1400003-01' }, year: P.year },
      required: ['plan_id'],
    },
  }),
  pathParams: ['plan_id'],
  responseSchema: DENTAL_DETAIL_RESPONSE,
  cacheable: true,
  handle(ctx, p) {
    const yd = ctx.registry.get(p.year)!;
    const r = findDentalPlan(yd, p.plan_id, ctx.registry);
    const loaded = yd.ds.dental().ratesLoaded(r.state);
    return {
      _links: {
        self: { href: `${ctx.baseUrl}/v1/health/dental/plans/${r.id}?year=${p.year}`, type: 'application/json' },
        collection: { href: `${ctx.baseUrl}/v1/health/dental/plans{?zip,age,year}`, templated: true },
      },
      ...dentalPlanFields(r),
      csr_variation: r.csr_variation,
      service_area_id: r.service_area_id,
      premiums_loaded: loaded,
      premium_note: loaded ? null : noDentalRatesNote(r.state, p.year),
      plan_year: p.year,
      ...dentalLabels(yd, r.state),
    };
  },
});
