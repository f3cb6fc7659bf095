/**
 * @module JSON Schemas that several operations use: the common query parameters, the HAL link, the
 * plan summary of search and compare, and the problem document. Each operation's own response schema
 * is in its file. Query schemas are validated by ajv, response schemas serialize responses
 * (fast-json-stringify) and check them in the tests, and both make the OpenAPI 3.1 document. Written in
 * the subset draft-07 and OpenAPI 3.1 share: `type: [T, 'null']` for nullable values, no `nullable`,
 * no `prefixItems`.
 */
import { METAL_LEVELS, PLAN_TYPES } from '../engine/plan-record.ts';
import type { JsonSchema } from './query.ts';

export const YEAR_MIN = 2014;
export const YEAR_MAX = 2030;

export const P = {
  zip: { type: 'string', minLength: 5, maxLength: 5, pattern: '^\\d{5}$', description: '5-digit ZIP code', example: '99501' },
  age: {
    type: 'integer',
    minimum: 0,
    maximum: 65,
    description: 'Applicant age; 0–14 priced at the child rate, 64 and above at the age-64 rate',
    example: 35,
  },
  year: {
    type: 'integer',
    minimum: YEAR_MIN,
    maximum: YEAR_MAX,
    description: 'Plan year; defaults to the current year of /v1/health/years',
  },
  county_fips: {
    type: 'string',
    minLength: 5,
    maxLength: 5,
    pattern: '^\\d{5}$',
    description: 'County FIPS code choosing one location of a ZIP that spans several',
  },
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

/**
 * Where a priced response was priced, in the order search and compare write it (the serializers follow
 * the schema's order, so the order is part of the bytes).
 */
export const PRICED_AT = {
  county: { type: 'string' },
  county_fips: { type: 'string' },
  rating_area: { type: 'string' },
  multiple_areas: { type: 'boolean' },
  plan_year: { type: 'integer' },
} as const;

/** The provenance labels every plan-data response ends with. */
export const LABELS = {
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
    deductible: {
      type: 'object',
      properties: { individual: NULLABLE_NUMBER, family: NULLABLE_NUMBER },
      required: ['individual', 'family'],
      additionalProperties: false,
    },
    max_out_of_pocket: {
      type: 'object',
      properties: { individual: NULLABLE_NUMBER, family: NULLABLE_NUMBER },
      required: ['individual', 'family'],
      additionalProperties: false,
    },
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
  required: [
    '_links',
    'id',
    'name',
    'issuer',
    'state',
    'metal_level',
    'plan_type',
    'premium',
    'premium_with_credit',
    'deductible',
    'max_out_of_pocket',
    'hsa_eligible',
    'national_network',
    'links',
  ],
  additionalProperties: false,
} as const;

/** The `_links` object of a response: a HAL link for each name. */
export const LINKS_OF = (names: readonly string[], required: readonly string[] = ['self']) => ({
  type: 'object',
  properties: Object.fromEntries(names.map((n) => [n, HAL_LINK])),
  required,
  additionalProperties: false,
});

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
      items: {
        type: 'object',
        properties: { field: { type: 'string' }, message: { type: 'string' } },
        required: ['field', 'message'],
        additionalProperties: false,
      },
    },
    required_tier: { type: 'string', enum: ['pro', 'enterprise'] },
    upgrade: { type: 'string' },
  },
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: false,
} as const;
