/**
 * @module JSON Schemas that several operations use: the common query parameters, the HAL link, the
 * plan summary of search and compare, and the problem document. Each operation's own response schema
 * is in its file. Query schemas are validated by ajv, response schemas serialize responses
 * (fast-json-stringify) and check them in the tests, and both make the OpenAPI 3.1 document. Written in
 * the subset draft-07 and OpenAPI 3.1 share: `type: [T, 'null']` for nullable values, no `nullable`,
 * no `prefixItems`.
 */
import { API_YEAR_MAX, API_YEAR_MIN } from '../engine/plan-years.ts';
import { METAL_LEVELS, PLAN_TYPES } from '../engine/plan-record.ts';
import { MEMBER_PREMIUM_BASES } from '../engine/subsidy.ts';
import { PAID_TIERS } from '../policy/tiers.ts';
import { ISSUER_NOTE } from './issuer-fields.ts';
import type { JsonSchema } from './query.ts';

export { API_YEAR_MAX as YEAR_MAX, API_YEAR_MIN as YEAR_MIN, API_YEAR_RANGE_TEXT as YEAR_RANGE_TEXT } from '../engine/plan-years.ts';
// The fronts take the plan-id rules from here, not from the engine: one layer down at a time.
export { DEFAULT_VARIANT, PLAN_ID_PATTERN } from '../engine/plan-record.ts';

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
    minimum: API_YEAR_MIN,
    maximum: API_YEAR_MAX,
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

/** Annual household income, dollars: the APTC estimate's and the ICHRA test's, each with its wording. */
/** `ages`: a household priced instead of one `age`: a Pro parameter, like income. */
export const HOUSEHOLD_AGES = {
  type: 'array',
  items: { type: 'integer', minimum: 0, maximum: 65 },
  minItems: 1,
  maxItems: 10,
  description:
    'Pro. Ages of the household members seeking coverage (comma-separated or repeated; 1–10 members), instead of age: premiums are the household’s monthly total, with only the three oldest children under 21 charged (family tiers in NY and VT)',
  'x-pro': true,
} as const;

/** `age` where `ages` may take its place. */
export const AGE_OR_AGES = { ...P.age, description: `${P.age.description}. Required unless ages is given` } as const;

export const HOUSEHOLD_INCOME = (description: string) => ({ type: 'number', minimum: 0, maximum: 10_000_000, description }) as const;

/** A nullable dollar amount with what it is; null where the plan's data does not give one. */
export const NULLABLE_DOLLARS = (description: string) => ({ type: ['number', 'null'], description }) as const;

export const HAL_LINK = {
  type: 'object',
  description: 'A HAL link; what it leads to is said by the _links object that holds it',
  properties: {
    href: { type: 'string', description: 'URL of the linked resource; a URI template (RFC 6570) to expand first when templated is true' },
    templated: { type: 'boolean', description: 'True when href is a URI template' },
    type: { type: 'string', description: 'Media type of the linked resource' },
    title: { type: 'string', description: 'Human-readable label of the link' },
  },
  required: ['href'],
  additionalProperties: false,
} as const;

/**
 * Where a priced response was priced, in the order search and compare write it (the serializers follow
 * the schema's order, so the order is part of the bytes).
 */
export const PRICED_AT = {
  county: { type: 'string', description: 'County the premiums are for (the ZIP’s primary county unless county_fips chose another)' },
  county_fips: { type: 'string', description: '5-digit FIPS code of that county' },
  rating_area: { type: 'string', description: 'State rating area the premiums are for, e.g. "Rating Area 10"' },
  multiple_areas: {
    type: 'boolean',
    description: 'True when the ZIP lies in several rating areas: premiums differ by county, choose one with county_fips',
  },
  plan_year: { type: 'integer', description: 'Plan year of the plans and premiums' },
} as const;

/** The provenance labels every plan-data response ends with. */
export const LABELS = {
  data_source: {
    type: 'string',
    description:
      'Where the data comes from: puf_data (CMS Exchange public use files, the HealthCare.gov states) or state_exchange (a state running its own marketplace, whose plans the build does not hold: only the APTC estimate answers there, see benchmark_source); +modeled_premiums when premiums are modeled from SLCSP benchmark data rather than issuer rates',
  },
  data_freshness: { type: 'string', description: 'Plan year and date of the source data, and how premiums were obtained' },
} as const;

/** The required members a located page ends with: its place, where it was priced, its provenance. */
export const LOCATED_PAGE_REQUIRED = ['zip', 'state', ...Object.keys(PRICED_AT), ...Object.keys(LABELS)] as const;

/** A household member's age, in the order of `ages`. */
const MEMBER_AGE = { type: 'integer', description: 'Member age' } as const;

/**
 * The one schema of a household's members, in the order of `ages`: every response's `members` is this
 * array, each member's age followed by what that response says of the member (search: whether charged;
 * compare, detail, out-of-pocket: the share of the premium; APTC: the share of the benchmark).
 */
export function householdMembers<const P extends Readonly<Record<string, object>>>(description: string, properties: P) {
  return {
    type: 'array',
    description,
    items: {
      type: 'object',
      properties: { age: MEMBER_AGE, ...properties },
      required: ['age', ...Object.keys(properties)],
      additionalProperties: false,
    },
  } as const;
}

/** Whether a member adds to the household premium: the family-tier rule on children under 21. */
const MEMBER_CHARGED = {
  type: 'boolean',
  description:
    'Whether the member adds to the household premium: false for children under 21 beyond the three oldest, who are covered at no premium',
} as const;

/** How a member's share (`field`) of a premium was found: their own rate, or a share of a family tier. */
export function memberPremiumBasis(field: string) {
  return {
    type: 'string',
    enum: [...MEMBER_PREMIUM_BASES],
    description: `member_rate: ${field} is the member’s own age-rated premium; tier_share: a family tier (NY, VT) priced the household as one premium and ${field} is this member’s share of it (split by the members’ age-curve rates, evenly in VT), not a premium the member could buy alone`,
  } as const;
}

/** A searched household's members: whether each is charged (search rows carry the household total alone). */
export const HOUSEHOLD_MEMBERS = householdMembers(
  'With ages only: each member in the order of ages, and whether the member is charged (false for children under 21 beyond the three oldest, who are covered at no premium); premiums are the household’s total',
  { charged: MEMBER_CHARGED },
);

/** What a member's share of a plan's premium says of the member, after the age (compare, detail, out-of-pocket). */
const PREMIUM_SHARE = {
  premium: { type: 'number', description: 'The member’s monthly share of the household premium, dollars; 0 when not charged' },
  charged: MEMBER_CHARGED,
  premium_basis: memberPremiumBasis('premium'),
} as const;

/** The rule a member breakdown follows, which every response that has one states after its own sentence. */
const BREAKDOWN_RULE =
  'Per-member states charge each member’s age-rated premium, but only the three oldest children under 21; NY and VT price the family tier and split it by the members’ age-curve rates';

/** A household's members with their shares of a plan's premium (compare, detail, out-of-pocket), said by `lead`. */
export function memberBreakdown(lead: string) {
  return householdMembers(`${lead}. ${BREAKDOWN_RULE}`, PREMIUM_SHARE);
}

export const PLAN_SUMMARY = {
  type: 'object',
  properties: {
    _links: {
      type: 'object',
      description: 'HAL links: self (the plan’s detail)',
      properties: { self: HAL_LINK },
      required: ['self'],
      additionalProperties: false,
    },
    id: {
      type: 'string',
      description: 'Plan variant ID: 14-character standard component ID + "-" + 2-digit variant (CSR variants of silver: -04, -05, -06)',
    },
    name: { type: 'string', description: 'Marketing name of the plan' },
    issuer: {
      type: ['string', 'null'],
      description: 'Insurance company (issuer) marketing name; null when the source file does not publish it (issuer_note)',
    },
    issuer_note: ISSUER_NOTE,
    state: { type: 'string', description: 'Two-letter state code' },
    metal_level: {
      type: 'string',
      enum: [...METAL_LEVELS],
      description: 'Metal level (actuarial value tier): bronze, expanded bronze, silver, gold, platinum or catastrophic',
    },
    plan_type: { type: 'string', enum: [...PLAN_TYPES], description: 'Network type: hmo, ppo, epo, pos or indemnity' },
    premium: {
      type: 'number',
      description:
        'Monthly premium in dollars for the requested age, non-tobacco rate, before any credit (modeled when data_source says so)',
    },
    premium_with_credit: NULLABLE_DOLLARS(
      'Monthly premium after the estimated premium tax credit (APTC), never below 0; null unless income and household_size were given',
    ),
    deductible: {
      type: 'object',
      description: 'Yearly deductible in dollars, in-network tier 1 (medical and drug combined when the plan integrates them)',
      properties: {
        individual: NULLABLE_DOLLARS('Deductible for one person; null when the plan does not state it'),
        family: NULLABLE_DOLLARS('Deductible for a family, per group; null when the plan does not state it'),
      },
      required: ['individual', 'family'],
      additionalProperties: false,
    },
    max_out_of_pocket: {
      type: 'object',
      description: 'Yearly out-of-pocket maximum in dollars, in-network tier 1, same basis as deductible',
      properties: {
        individual: NULLABLE_DOLLARS('Out-of-pocket maximum for one person; null when the plan does not state it'),
        family: NULLABLE_DOLLARS('Out-of-pocket maximum for a family; null when the plan does not state it'),
      },
      required: ['individual', 'family'],
      additionalProperties: false,
    },
    hsa_eligible: { type: 'boolean', description: 'Whether the plan qualifies for a health savings account (HSA)' },
    national_network: { type: 'boolean', description: 'Whether the plan’s provider network is national' },
    links: {
      type: 'object',
      description: 'The issuer’s documents for the plan (URLs as published in the CMS files)',
      properties: {
        benefits_summary: { type: ['string', 'null'], description: 'Summary of Benefits and Coverage (SBC) URL, or null' },
        brochure: { type: ['string', 'null'], description: 'Plan brochure URL, or null' },
        formulary: { type: ['string', 'null'], description: 'Drug formulary URL, or null' },
        provider_directory: { type: ['string', 'null'], description: 'Provider directory URL of the plan’s network, or null' },
      },
      required: ['benefits_summary', 'brochure', 'formulary', 'provider_directory'],
      additionalProperties: false,
    },
    members: memberBreakdown(
      'Compare with ages only (search rows carry the household total alone). With ages only: each member in the order of ages, with their share of the household premium',
    ),
  },
  required: [
    '_links',
    'id',
    'name',
    'issuer',
    'issuer_note',
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

/** What each link relation of our responses leads to, for the schemas a model reads. */
const LINK_MEANING: Readonly<Record<string, string>> = {
  self: 'This resource, as requested',
  first: 'The first page of this search',
  next: 'The next page (cursor-based); absent on the last page',
  prev: 'The previous page (page-based); absent on the first',
  last: 'The last page (page-based only)',
  plan_detail: 'Template of a listed plan’s detail: expand {plan_id}',
  collection: 'Plan search of the plan’s state and year',
  plan: 'The plan’s detail',
  search: 'Template of a plan search at this ZIP; absent where no plan data is loaded for the state',
};

/**
 * The `_links` object of a response: a HAL link for each name (the one HalLink schema, so the document
 * refers to it), the meaning of each said once in the object's description.
 */
export const LINKS_OF = (names: readonly string[], required: readonly string[] = ['self']) => ({
  type: 'object',
  description: `HAL links: ${names.map((n) => `${n} (${LINK_MEANING[n] ?? n})`).join('; ')}`,
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
    required_tier: { type: 'string', enum: PAID_TIERS },
    upgrade: { type: 'string' },
  },
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: false,
} as const;
