/**
 * @module JSON Schemas shared by the operations: query parameters (validated by ajv), response bodies
 * (serialized by fast-json-stringify, checked by the tests) and the OpenAPI 3.1 document, all from these
 * definitions. Written in the subset draft-07 and OpenAPI 3.1 share: `type: [T, 'null']` for nullable
 * values, no `nullable`, no `prefixItems`.
 */
import { METAL_LEVELS, PLAN_TYPES } from '../../engine/plan-record.ts';
import type { JsonSchema } from '../query.ts';

export const YEAR_MIN = 2014;
export const YEAR_MAX = 2030;

export const P = {
  zip: { type: 'string', minLength: 5, maxLength: 5, pattern: '^\\d{5}$', description: '5-digit ZIP code', example: '99501' },
  age: { type: 'integer', minimum: 0, maximum: 65, description: 'Applicant age; 0–14 priced at the child rate, 64 and above at the age-64 rate', example: 35 },
  year: { type: 'integer', minimum: YEAR_MIN, maximum: YEAR_MAX, description: 'Plan year; defaults to the current year of /v1/health/years' },
  county_fips: { type: 'string', minLength: 5, maxLength: 5, pattern: '^\\d{5}$', description: 'County FIPS code choosing one location of a ZIP that spans several' },
} as const satisfies Record<string, JsonSchema>;

export const NULLABLE_NUMBER = { type: ['number', 'null'] } as const;

export const HAL_LINK = {
  type: 'object',
  properties: {
    href: { type: 'string' },
    templated: { type: 'boolean' },
    type: { type: 'string' },
    title: { type: 'string' },
  },
  required: ['href'],
  additionalProperties: false,
} as const;

const LABELS = {
  data_source: { type: 'string' },
  data_freshness: { type: 'string' },
} as const;

export const PLAN_SUMMARY = {
  type: 'object',
  properties: {
    _links: { type: 'object', properties: { self: HAL_LINK }, required: ['self'], additionalProperties: false },
    id: { type: 'string' },
    name: { type: 'string' },
    issuer: { type: 'string' },
    state: { type: 'string' },
    metal_level: { type: 'string', enum: [...METAL_LEVELS] },
    plan_type: { type: 'string', enum: [...PLAN_TYPES] },
    premium: { type: 'number' },
    premium_with_credit: NULLABLE_NUMBER,
    deductible: { type: 'object', properties: { individual: NULLABLE_NUMBER, family: NULLABLE_NUMBER }, required: ['individual', 'family'], additionalProperties: false },
    max_out_of_pocket: { type: 'object', properties: { individual: NULLABLE_NUMBER, family: NULLABLE_NUMBER }, required: ['individual', 'family'], additionalProperties: false },
    hsa_eligible: { type: 'boolean' },
    national_network: { type: 'boolean' },
    links: {
      type: 'object',
      properties: {
        benefits_summary: { type: ['string', 'null'] },
        brochure: { type: ['string', 'null'] },
        formulary: { type: ['string', 'null'] },
        provider_directory: { type: ['string', 'null'] },
      },
      required: ['benefits_summary', 'brochure', 'formulary', 'provider_directory'],
      additionalProperties: false,
    },
  },
  required: ['_links', 'id', 'name', 'issuer', 'state', 'metal_level', 'plan_type', 'premium', 'premium_with_credit', 'deductible', 'max_out_of_pocket', 'hsa_eligible', 'national_network', 'links'],
  additionalProperties: false,
} as const;

const LINKS_OF = (names: readonly string[], required: readonly string[] = ['self']) => ({
  type: 'object',
  properties: Object.fromEntries(names.map((n) => [n, HAL_LINK])),
  required,
  additionalProperties: false,
});

export const SEARCH_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'first', 'next', 'prev', 'last', 'plan_detail']),
    _embedded: { type: 'object', properties: { plans: { type: 'array', items: PLAN_SUMMARY } }, required: ['plans'], additionalProperties: false },
    total: { type: ['integer', 'null'] },
    page: { type: ['integer', 'null'] },
    per_page: { type: 'integer' },
    page_size: { type: 'integer' },
    next_cursor: { type: 'string' },
    zip: { type: 'string' },
    state: { type: 'string' },
    county: { type: 'string' },
    county_fips: { type: 'string' },
    rating_area: { type: 'string' },
    multiple_areas: { type: 'boolean' },
    plan_year: { type: 'integer' },
    ...LABELS,
  },
  required: ['_links', '_embedded', 'total', 'page', 'per_page', 'zip', 'state', 'county', 'county_fips', 'rating_area', 'multiple_areas', 'plan_year', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

const MONEY_SET = (keys: readonly string[]) => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, NULLABLE_NUMBER])),
  required: keys,
  additionalProperties: false,
});
const TIER_KEYS = ['individual_tier1', 'individual_tier2', 'family_tier1', 'family_tier2', 'individual_oon', 'family_oon'] as const;
const SBC = {
  type: 'object',
  properties: { deductible: NULLABLE_NUMBER, copayment: NULLABLE_NUMBER, coinsurance: NULLABLE_NUMBER, limit: NULLABLE_NUMBER, total: NULLABLE_NUMBER },
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
    '_links', 'id', 'standard_component_id', 'name', 'issuer', 'state', 'metal_level', 'plan_type', 'service_area_id', 'hsa_eligible',
    'national_network', 'deductible', 'max_out_of_pocket', 'sbc_scenarios', 'links', 'issuer_id', 'csr_variation', 'network_id',
    'formulary_id', 'referral_required_for_specialist', 'out_of_country_coverage', 'out_of_service_area_coverage', 'plan_year',
    'data_source', 'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const COMPARE_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    _embedded: { type: 'object', properties: { plans: { type: 'array', minItems: 2, maxItems: 4, items: PLAN_SUMMARY } }, required: ['plans'], additionalProperties: false },
    comparison_summary: {
      type: 'object',
      properties: { lowest_premium: { type: 'string' }, lowest_deductible: { type: ['string', 'null'] }, lowest_moop: { type: ['string', 'null'] } },
      required: ['lowest_premium', 'lowest_deductible', 'lowest_moop'],
      additionalProperties: false,
    },
    zip: { type: 'string' },
    county: { type: 'string' },
    county_fips: { type: 'string' },
    rating_area: { type: 'string' },
    multiple_areas: { type: 'boolean' },
    plan_year: { type: 'integer' },
    ...LABELS,
  },
  required: ['_links', '_embedded', 'comparison_summary', 'zip', 'county_fips', 'rating_area', 'plan_year', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

export const OOP_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'plan'], ['self', 'plan']),
    plan_id: { type: 'string' },
    plan_name: { type: 'string' },
    metal_level: PLAN_SUMMARY.properties.metal_level,
    zip: { type: 'string' },
    age: { type: 'integer' },
    county: { type: 'string' },
    county_fips: { type: 'string' },
    multiple_areas: { type: 'boolean' },
    monthly_premium: { type: 'number' },
    scenario: { type: 'string', enum: ['low', 'medium', 'high', 'having_baby', 'having_diabetes'] },
    estimated_annual_cost: { type: 'number' },
    sbc_data_available: { type: 'boolean' },
    breakdown: {
      type: 'object',
      properties: {
        annual_premium: { type: 'number' },
        estimated_out_of_pocket: { type: 'number' },
        deductible_applied: { type: 'number' },
        coinsurance_applied: { type: 'number' },
        copay_applied: { type: 'number' },
        limits_or_exclusions: { type: 'number' },
      },
      required: ['annual_premium', 'estimated_out_of_pocket', 'deductible_applied', 'coinsurance_applied', 'copay_applied', 'limits_or_exclusions'],
      additionalProperties: false,
    },
    notes: { type: 'array', items: { type: 'string' } },
    plan_year: { type: 'integer' },
    ...LABELS,
  },
  required: ['_links', 'plan_id', 'plan_name', 'metal_level', 'zip', 'age', 'county', 'county_fips', 'multiple_areas', 'monthly_premium', 'scenario', 'estimated_annual_cost', 'sbc_data_available', 'breakdown', 'notes', 'plan_year', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

export const LOCATION = {
  type: 'object',
  properties: { zip: { type: 'string' }, state: { type: 'string' }, county: { type: 'string' }, county_fips: { type: 'string' }, rating_area: { type: 'string' }, multiple_areas: { type: 'boolean' } },
  required: ['zip', 'state', 'county', 'county_fips', 'rating_area', 'multiple_areas'],
  additionalProperties: false,
} as const;

export const APTC_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'search'], ['self', 'search']),
    aptc_amount: { type: 'number' },
    benchmark_premium: { type: 'number' },
    benchmark_plan_description: { type: 'string' },
    benchmark_plan_id: { type: ['string', 'null'] },
    household: {
      type: 'object',
      properties: {
        income: { type: 'number' },
        size: { type: 'integer' },
        fpl_amount: { type: 'number' },
        fpl_percentage: { type: 'number' },
        fpl_band: { type: ['string', 'null'] },
        applicable_percentage: NULLABLE_NUMBER,
        expected_yearly_contribution: { type: 'number' },
        expected_monthly_contribution: { type: 'number' },
      },
      required: ['income', 'size', 'fpl_amount', 'fpl_percentage', 'fpl_band', 'applicable_percentage', 'expected_yearly_contribution', 'expected_monthly_contribution'],
      additionalProperties: false,
    },
    members: {
      type: 'array',
      items: {
        type: 'object',
        properties: { age: { type: 'integer' }, slcsp_premium: { type: 'number' }, counted_in_benchmark: { type: 'boolean' } },
        required: ['age', 'slcsp_premium', 'counted_in_benchmark'],
        additionalProperties: false,
      },
    },
    location: LOCATION,
    eligible: { type: 'boolean' },
    benchmark_source: { type: ['string', 'null'], enum: ['rate_puf', 'modeled', 'benchmark_only', null] },
    notes: { type: 'array', items: { type: 'string' } },
    plan_year: { type: 'integer' },
    ...LABELS,
  },
  required: ['_links', 'aptc_amount', 'benchmark_premium', 'benchmark_plan_description', 'household', 'members', 'location', 'eligible', 'benchmark_source', 'notes', 'plan_year', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

const CROSSWALK_PLAN = {
  type: 'object',
  properties: {
    plan_id: { type: 'string' },
    year: { type: 'integer' },
    state: { type: 'string' },
    name: { type: ['string', 'null'] },
    issuer_id: { type: ['string', 'null'] },
    issuer_name: { type: ['string', 'null'] },
  },
  required: ['plan_id', 'year', 'state', 'name', 'issuer_id', 'issuer_name'],
  additionalProperties: false,
} as const;

export const CROSSWALK_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    source_plan: CROSSWALK_PLAN,
    target_plan: { anyOf: [CROSSWALK_PLAN, { type: 'null' }] },
    crosswalk_reason: { type: 'string' },
    reason_description: { type: 'string' },
    reason_code: { type: 'integer' },
    crosswalk_level: { type: 'integer' },
    data_source: { type: 'string' },
    data_freshness: { type: 'string' },
  },
  required: ['_links', 'source_plan', 'target_plan', 'crosswalk_reason', 'reason_description', 'reason_code', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

export const ZIP_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'search'], ['self', 'search']),
    zip: { type: 'string' },
    locations: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          state: { type: 'string' },
          county_fips: { type: 'string' },
          county_name: { type: 'string' },
          rating_area_id: { type: 'string' },
          residential_share: { type: 'number' },
          primary: { type: 'boolean' },
        },
        required: ['state', 'county_fips', 'county_name', 'rating_area_id', 'primary'],
        additionalProperties: false,
      },
    },
    multiple_areas: { type: 'boolean' },
    plan_year: { type: 'integer' },
    plans_available: { type: 'boolean', description: 'Whether the loaded build has plan data for the state of the primary location; false: the plan endpoints answer 404 for this ZIP' },
    note: { type: 'string', description: 'Present when plans_available is false, saying which data is missing' },
    data_source: { type: 'string', description: 'Source of the plan data of the primary location’s state; absent when plans_available is false' },
    data_freshness: { type: 'string' },
  },
  required: ['_links', 'zip', 'locations', 'multiple_areas', 'plan_year', 'plans_available', 'data_freshness'],
  additionalProperties: false,
} as const;

export const YEARS_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    current_year: { type: 'integer' },
    available_years: { type: 'array', items: { type: 'integer' } },
  },
  required: ['_links', 'current_year', 'available_years'],
  additionalProperties: false,
} as const;

export const ISSUERS_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    state: { type: 'string' },
    year: { type: 'integer' },
    issuers: {
      type: 'array',
      items: {
        type: 'object',
        properties: { issuer_id: { type: 'string' }, name: { type: 'string' }, plan_count: { type: 'integer' } },
        required: ['issuer_id', 'name', 'plan_count'],
        additionalProperties: false,
      },
    },
    total: { type: 'integer' },
    data_source: { type: 'string' },
    data_freshness: { type: 'string' },
  },
  required: ['_links', 'state', 'year', 'issuers', 'total', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

export const PROBLEM_RESPONSE = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'], additionalProperties: false },
    },
    required_tier: { type: 'string', enum: ['pro', 'enterprise'] },
    upgrade: { type: 'string' },
  },
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: false,
} as const;
