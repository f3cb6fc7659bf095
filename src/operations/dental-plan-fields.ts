/**
 * @module The fields of a stand-alone dental plan that search and detail both answer,
 * their schema, and the labels of dental responses. Dental premiums are the Rate PUF's or null: modeled
 * medical premiums give no basis for dental ones, so a state without a Rate PUF gets null and says so.
 */
import { DENTAL_ENROLLEES, DENTAL_METAL_LEVELS, type DentalPlanRecord } from '../engine/dental-record.ts';
import { PLAN_TYPES } from '../engine/plan-record.ts';
import type { YearData } from './data-registry.ts';
import { HAL_LINK, LABELS, NULLABLE_DOLLARS } from './shared-schemas.ts';
import { ISSUER_NOTE, issuerFields } from './issuer-fields.ts';

export const DENTAL_PLAN_PROPERTIES = {
  id: {
    type: 'string',
    description: 'Dental plan variant ID: 14-character standard component ID + "-00" (off exchange) or "-01" (on exchange)',
  },
  standard_component_id: {
    type: 'string',
    description: '14-character plan ID shared by the on- and off-exchange variants; the Rate PUF’s PlanId',
  },
  name: { type: 'string', description: 'Marketing name of the dental plan' },
  issuer: {
    type: ['string', 'null'],
    description: 'Insurance company (issuer) marketing name; null when the source file does not publish it (issuer_note)',
  },
  issuer_note: ISSUER_NOTE,
  issuer_id: { type: 'string', description: '5-digit HIOS issuer ID' },
  state: { type: 'string', description: 'Two-letter state code' },
  plan_type: { type: 'string', enum: [...PLAN_TYPES], description: 'Network type: hmo, ppo, epo, pos or indemnity' },
  metal_level: { type: 'string', enum: [...DENTAL_METAL_LEVELS], description: 'Dental coverage level as CMS files it: high or low' },
  enrollees: {
    type: ['string', 'null'],
    enum: [...DENTAL_ENROLLEES, null],
    description: 'Who may enrol (CMS ChildOnlyOffering): adult_and_child, child_only or adult_only; null when the file does not say',
  },
  on_exchange: { type: 'boolean', description: 'Whether this variant is sold on the marketplace (-01) rather than off it (-00)' },
  ehb_pediatric_dental_apportionment: {
    type: ['number', 'null'],
    description:
      'Share of the premium for the pediatric dental essential health benefit (CMS EHBPediatricDentalApportionmentQuantity), 0–1; null when not given',
  },
  deductible: {
    type: 'object',
    description: 'Yearly deductible in dollars, in network',
    properties: { individual: NULLABLE_DOLLARS('Deductible for one person; null when the plan has none to state ("Not Applicable")') },
    required: ['individual'],
    additionalProperties: false,
  },
  max_out_of_pocket: {
    type: 'object',
    description: 'Yearly out-of-pocket maximum in dollars, in network (for dental plans, the pediatric dental EHB limit)',
    properties: { individual: NULLABLE_DOLLARS('Out-of-pocket maximum for one person; null when the plan has none to state') },
    required: ['individual'],
    additionalProperties: false,
  },
  links: {
    type: 'object',
    description: 'The issuer’s documents for the plan (URLs as published in the CMS files)',
    properties: {
      benefits_summary: { type: ['string', 'null'], description: 'Summary of benefits URL, or null' },
      brochure: { type: ['string', 'null'], description: 'Plan brochure URL, or null' },
    },
    required: ['benefits_summary', 'brochure'],
    additionalProperties: false,
  },
} as const;

export const DENTAL_PLAN_REQUIRED = Object.keys(DENTAL_PLAN_PROPERTIES);

/** Premium members of a priced dental plan. */
export const DENTAL_PREMIUM_PROPERTIES = {
  premium: NULLABLE_DOLLARS(
    'Monthly premium in dollars for the requested age and the location’s rating area, from the Rate PUF; null where no dental rates are loaded for the state (never modeled) or the file has no rate for this plan, area and age',
  ),
  premium_source: {
    type: ['string', 'null'],
    enum: ['rate_puf', null],
    description: 'rate_puf when premium is the issuer’s filed rate; null when premium is null',
  },
  premium_note: {
    type: ['string', 'null'],
    description:
      'Why premium is null, e.g. "No dental rates are loaded for TX 2025: premiums are not modeled for dental plans"; null when there is a premium',
  },
} as const;

/** The dental plan's own members, in schema order. */
export function dentalPlanFields(r: DentalPlanRecord): Record<string, unknown> {
  return {
    id: r.id,
    standard_component_id: r.standard_component_id,
    name: r.name,
    ...issuerFields(r),
    issuer_id: r.issuer_id,
    state: r.state,
    plan_type: r.plan_type,
    metal_level: r.metal_level,
    enrollees: r.enrollees,
    on_exchange: r.on_exchange,
    ehb_pediatric_dental_apportionment: r.ehb_pediatric_dental_apportionment,
    deductible: { individual: r.deductible_individual },
    max_out_of_pocket: { individual: r.max_out_of_pocket_individual },
    links: r.links,
  };
}

/** The label of a state whose dental premiums are not loaded. */
export function noDentalRatesNote(state: string, year: number): string {
  return `No dental rates are loaded for ${state} ${year}: premiums are not modeled for dental plans`;
}

/** Why a plan of a state with dental rates has no premium here. */
export function unratedNote(ratingArea: number, age: number): string {
  return `The Rate PUF has no rate for this plan in Rating Area ${ratingArea} at age ${age}`;
}

export const DENTAL_LABELS = {
  data_source: {
    ...LABELS.data_source,
    description:
      'Where the data comes from: puf_data (CMS Exchange public use files) or state_exchange (a state-based exchange’s public use files); dental premiums are never modeled',
  },
  data_freshness: { type: 'string', description: 'Plan year and date of the source data, and whether dental premiums are loaded' },
} as const;

/** `data_source` and `data_freshness` of a dental response: the state's, without the medical premium model. */
export function dentalLabels(yd: YearData, state: string): { data_source: string; data_freshness: string } {
  const ratesLoaded = yd.ds.dental().ratesLoaded(state);
  const [asOf] = yd.freshness(state).split(';');
  return {
    data_source: yd.dataSource(state).replace('+modeled_premiums', ''),
    data_freshness: `${asOf}; ${ratesLoaded ? 'dental premiums from the Rate PUF' : 'dental premiums not loaded (never modeled)'}`,
  };
}

export const DENTAL_SELF_LINKS = {
  type: 'object',
  description: 'HAL links: self (the dental plan’s detail)',
  properties: { self: HAL_LINK },
  required: ['self'],
  additionalProperties: false,
} as const;
