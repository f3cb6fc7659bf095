/**
 * @module The REST/MCP case table: each case names an operation by its REST path, gives its input twice
 * (the REST query string and the MCP tool arguments) and the outcome expected. Run through both fronts
 * by test/mcp/rest-mcp-cases.test.ts, and its REST requests and responses validated against the served
 * OpenAPI document by test/http/openapi-validation.test.ts. The data is the crosswalk fixture's.
 */
import type { Tier } from '../../src/policy/tiers.ts';
import { FIXTURE_ZIPS } from './fixture-inputs.ts';

export interface Case {
  readonly name: string;
  /** The operation's REST path template: links the case to its route and to its tool. */
  readonly op: string;
  /** REST path and query string, as a client sends them. */
  readonly rest: string;
  readonly args: Record<string, unknown>;
  /** Caller's tier; Pro when absent. */
  readonly tier?: Tier;
  readonly status: number;
  /** `errors[].field` of a 400 in REST names, in order. */
  readonly fields?: readonly string[];
  /** The same fields in the tool's argument names, when they differ. */
  readonly toolFields?: readonly string[];
  readonly detail?: string | RegExp;
  /** The detail in the tool's argument names, when it differs: a model corrects what it sent by its name. */
  readonly toolDetail?: string;
  /** `errors[].message` of the tool, where a message speaks of the front itself (an endpoint, a tool). */
  readonly toolMessages?: readonly string[];
  /** Dotted paths into a 200 body (`_embedded.plans.0.id`, `locations.length`) and their values. */
  readonly facts?: Readonly<Record<string, unknown>>;
}

export const PLANS = '/v1/health/plans';
export const DETAIL = '/v1/health/plans/{plan_id}';
export const COMPARE = '/v1/health/plans/compare';
export const APTC = '/v1/health/plans/aptc-estimate';
export const OOP = '/v1/health/plans/{plan_id}/oop-estimate';
export const ICHRA = '/v1/health/ichra/affordability';
export const STATS = '/v1/health/plans/stats';
export const DENTAL = '/v1/health/dental/plans';
export const DENTAL_DETAIL = '/v1/health/dental/plans/{plan_id}';
export const CROSSWALK = '/v1/health/plans/crosswalk';
export const ZIPS = '/v1/health/zips/{zip}';
export const ISSUERS = '/v1/health/issuers';
export const YEARS = '/v1/health/years';
const SILVER = '11111TX0010001-01';
const GULF = '22222TX0020001-01';
const AK = '44444AK0040001-01';
/** A well-formed plan ID of HI, the fixture's state without plan data (README, "States without plan data"). */
const HI_PLAN = '12345HI0010001-01';
const NO_HI = 'No plan data for HI in 2025.';

export const CASES: readonly Case[] = [
  // Search.
  {
    name: 'search, cheapest first',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&per_page=2',
    args: { zip: '77002', age: 40, per_page: 2 },
    tier: 'free',
    status: 200,
    facts: { total: 7, 'plans.length': 2, 'plans.0.id': '22222TX0020002-01', county_fips: '48201' },
  },
  {
    name: 'search, catastrophic under 30',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=29&per_page=1',
    args: { zip: '77002', age: 29, per_page: 1 },
    status: 200,
    facts: { total: 8, 'plans.0.id': '11111TX0010005-01' },
  },
  {
    name: 'search, Pro filters and sort',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&issuer=coast&hsa_eligible=false&sort_by=deductible&sort_order=desc',
    args: { zip: '77002', age: 40, issuer: 'coast', hsa_eligible: false, sort_by: 'deductible', sort_order: 'desc' },
    status: 200,
    facts: { total: 2, 'plans.0.id': '22222TX0020002-01', 'plans.1.id': GULF },
  },
  {
    name: 'search, income shows the credit and CSR variants',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&income=20000&household_size=1&metal_level=silver&per_page=1',
    args: { zip: '77002', age: 40, income: 20000, household_size: 1, metal_level: 'silver', per_page: 1 },
    status: 200,
    facts: { 'plans.0.id': '33333TX0030001-06' },
  },
  {
    name: 'search, expanded bronze',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&metal_level=expanded_bronze',
    args: { zip: '77002', age: 40, metal_level: 'expanded_bronze' },
    status: 200,
    facts: { total: 1, 'plans.0.metal_level': 'expanded bronze' },
  },
  {
    name: 'search, split ZIP picks a county',
    op: PLANS,
    rest: `/v1/health/plans?zip=${FIXTURE_ZIPS.split}&age=40&county_fips=48201&per_page=1`,
    args: { zip: FIXTURE_ZIPS.split, age: 40, county_fips: '48201', per_page: 1 },
    status: 200,
    facts: { county_fips: '48201', multiple_areas: true },
  },
  {
    name: 'search, missing and malformed',
    op: PLANS,
    rest: '/v1/health/plans?zip=7700&per_page=101',
    args: { zip: '7700', per_page: 101 },
    status: 400,
    fields: ['age', 'zip', 'per_page'],
  },
  {
    // The missing pair is named whole: a caller pricing a household learns that ages is the other way.
    name: 'search, neither age nor ages',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002',
    args: { zip: '77002' },
    status: 400,
    fields: ['age'],
    detail: 'Missing required parameter age: give age (one person) or ages (a household).',
  },
  {
    // ICHRA takes one employee's age: no alternative to name.
    name: 'ichra, missing age',
    op: ICHRA,
    rest: '/v1/health/ichra/affordability?zip=77002&household_income=52000&hra_monthly=300',
    args: { zip: '77002', household_income: 52000, hra_monthly: 300 },
    status: 400,
    fields: ['age'],
    detail: 'Missing required parameter age.',
  },
  {
    // A misspelled filter never answers unfiltered plans: both fronts name it the same way.
    name: 'search, misspelled filter',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&metal=silver',
    args: { zip: '77002', age: 40, metal: 'silver' },
    status: 400,
    fields: ['metal'],
    detail: 'Unknown parameter metal (did you mean metal_level?).',
  },
  {
    // Other APIs take a key in the query; this one refuses it and says where it goes, on both fronts.
    name: 'search, key as a parameter',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&api_key=x',
    args: { zip: '77002', age: 40, api_key: 'x' },
    status: 400,
    fields: ['api_key'],
    detail: 'Unknown parameter api_key: credentials are read only from the Authorization header (Authorization: Bearer <key>).',
  },
  {
    name: 'search, float age',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40.5',
    args: { zip: '77002', age: 40.5 },
    status: 400,
    fields: ['age'],
    detail: 'Invalid age: Expected integer, received float.',
  },
  {
    name: 'search, income without household_size',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&income=30000',
    args: { zip: '77002', age: 40, income: 30000 },
    status: 400,
    fields: ['household_size'],
  },
  {
    name: 'search, Pro parameter for Free',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&max_premium=500',
    args: { zip: '77002', age: 40, max_premium: 500 },
    tier: 'free',
    status: 402,
    detail: 'The parameter max_premium requires a Pro subscription.',
  },
  {
    name: 'search, year not loaded',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&year=2024',
    args: { zip: '77002', age: 40, year: 2024 },
    status: 400,
    fields: ['year'],
  },
  {
    name: 'search, forged cursor',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&cursor=eyJ2IjoxfQ',
    args: { zip: '77002', age: 40, cursor: 'eyJ2IjoxfQ' },
    status: 400,
    fields: ['cursor'],
  },
  {
    name: 'search, state without plan data',
    op: PLANS,
    rest: `/v1/health/plans?zip=${FIXTURE_ZIPS.honolulu}&age=40`,
    args: { zip: FIXTURE_ZIPS.honolulu, age: 40 },
    status: 404,
    detail: 'No plan data for HI in 2025.',
  },
  // Plan detail.
  {
    name: 'detail',
    op: DETAIL,
    rest: `/v1/health/plans/${SILVER}`,
    args: { plan_id: SILVER },
    status: 200,
    facts: { id: SILVER, metal_level: 'silver', plan_year: 2025 },
  },
  {
    name: 'detail, bare ID is -01',
    op: DETAIL,
    rest: '/v1/health/plans/11111TX0010001',
    args: { plan_id: '11111TX0010001' },
    status: 200,
    facts: { id: SILVER },
  },
  {
    name: 'detail, unknown plan',
    op: DETAIL,
    rest: '/v1/health/plans/99999XX0000000-01',
    args: { plan_id: '99999XX0000000-01' },
    status: 404,
    detail: 'Plan 99999XX0000000-01 not found.',
  },
  {
    name: 'detail, plan of a state without plan data',
    op: DETAIL,
    rest: `/v1/health/plans/${HI_PLAN}`,
    args: { plan_id: HI_PLAN },
    status: 404,
    detail: NO_HI,
  },
  {
    name: 'detail, Free',
    op: DETAIL,
    rest: `/v1/health/plans/${SILVER}`,
    args: { plan_id: SILVER },
    tier: 'free',
    status: 402,
    detail: 'Plan details require a Pro subscription.',
  },
  // Compare.
  {
    name: 'compare',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},${GULF}&zip=77002&age=40`,
    args: { plan_ids: [SILVER, GULF], zip: '77002', age: 40 },
    status: 200,
    facts: { 'plans.length': 2, 'plans.0.id': SILVER },
  },
  {
    name: 'compare, one plan',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER}&zip=77002&age=40`,
    args: { plan_ids: [SILVER], zip: '77002', age: 40 },
    status: 400,
    fields: ['ids'],
    toolFields: ['plan_ids'],
    detail: 'Invalid ids: Array must contain at least 2 element(s).',
    toolDetail: 'Invalid plan_ids: Array must contain at least 2 element(s).',
  },
  {
    name: 'compare, same plan twice',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},11111TX0010001&zip=77002&age=40`,
    args: { plan_ids: [SILVER, '11111TX0010001'], zip: '77002', age: 40 },
    status: 400,
    fields: ['ids'],
    toolFields: ['plan_ids'],
    detail: 'Invalid ids: Plan IDs must be distinct.',
    toolDetail: 'Invalid plan_ids: Plan IDs must be distinct.',
  },
  {
    name: 'compare, plan not sold here',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},${AK}&zip=77002&age=40`,
    args: { plan_ids: [SILVER, AK], zip: '77002', age: 40 },
    status: 404,
    detail: `Plan ${AK} is not offered in ZIP 77002.`,
  },
  {
    name: 'compare, ZIP of a state without plan data',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},${GULF}&zip=${FIXTURE_ZIPS.honolulu}&age=40`,
    args: { plan_ids: [SILVER, GULF], zip: FIXTURE_ZIPS.honolulu, age: 40 },
    status: 404,
    detail: NO_HI,
  },
  {
    name: 'compare, plan of a state without plan data',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},${HI_PLAN}&zip=77002&age=40`,
    args: { plan_ids: [SILVER, HI_PLAN], zip: '77002', age: 40 },
    status: 404,
    detail: NO_HI,
  },
  // Out-of-pocket estimate.
  {
    name: 'OOP, SBC scenario',
    op: OOP,
    rest: `/v1/health/plans/${SILVER}/oop-estimate?zip=77002&age=40&scenario=having_baby`,
    args: { plan_id: SILVER, zip: '77002', age: 40, scenario: 'having_baby' },
    status: 200,
    facts: { plan_id: SILVER, sbc_data_available: true },
  },
  {
    name: 'OOP, unknown scenario',
    op: OOP,
    rest: `/v1/health/plans/${SILVER}/oop-estimate?zip=77002&age=40&scenario=extreme`,
    args: { plan_id: SILVER, zip: '77002', age: 40, scenario: 'extreme' },
    status: 400,
    fields: ['scenario'],
  },
  {
    name: 'OOP, plan not sold here',
    op: OOP,
    rest: `/v1/health/plans/${AK}/oop-estimate?zip=77002&age=40&scenario=low`,
    args: { plan_id: AK, zip: '77002', age: 40, scenario: 'low' },
    status: 404,
    detail: `Plan ${AK} is not offered in ZIP 77002.`,
  },
  {
    name: 'OOP, ZIP of a state without plan data',
    op: OOP,
    rest: `/v1/health/plans/${SILVER}/oop-estimate?zip=${FIXTURE_ZIPS.honolulu}&age=40&scenario=low`,
    args: { plan_id: SILVER, zip: FIXTURE_ZIPS.honolulu, age: 40, scenario: 'low' },
    status: 404,
    detail: NO_HI,
  },
  {
    name: 'OOP, plan and ZIP of a state without plan data',
    op: OOP,
    rest: `/v1/health/plans/${HI_PLAN}/oop-estimate?zip=${FIXTURE_ZIPS.honolulu}&age=40&scenario=low`,
    args: { plan_id: HI_PLAN, zip: FIXTURE_ZIPS.honolulu, age: 40, scenario: 'low' },
    status: 404,
    detail: NO_HI,
  },
  {
    name: 'OOP, Free',
    op: OOP,
    rest: `/v1/health/plans/${SILVER}/oop-estimate?zip=77002&age=40&scenario=low`,
    args: { plan_id: SILVER, zip: '77002', age: 40, scenario: 'low' },
    tier: 'free',
    status: 402,
  },
  // APTC estimate.
  {
    name: 'APTC',
    op: APTC,
    rest: '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=3&ages=40,38,10',
    args: { zip: '77002', household_income: 40000, household_size: 3, ages: [40, 38, 10] },
    status: 200,
    facts: { eligible: true, 'household.size': 3 },
  },
  {
    // States without plan data: a labelled benchmark-only estimate, and no link to a search that 404s.
    name: 'APTC, state without plan data',
    op: APTC,
    rest: `/v1/health/plans/aptc-estimate?zip=${FIXTURE_ZIPS.honolulu}&household_income=40000&household_size=1&ages=40`,
    args: { zip: FIXTURE_ZIPS.honolulu, household_income: 40000, household_size: 1, ages: [40] },
    status: 200,
    facts: { benchmark_source: 'benchmark_only', '_links.search': undefined, 'location.state': 'HI' },
  },
  {
    name: 'APTC, a repeated list parameter is the array',
    op: APTC,
    rest: '/v1/health/plans/aptc-estimate?zip=77002&income=40000&household_size=2&ages=40&ages=38',
    args: { zip: '77002', household_income: 40000, household_size: 2, ages: [40, 38] },
    status: 200,
    facts: { 'household.size': 2 },
  },
  {
    name: 'APTC, more ages than members',
    op: APTC,
    rest: '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=1&ages=40,38',
    args: { zip: '77002', household_income: 40000, household_size: 1, ages: [40, 38] },
    status: 400,
    fields: ['ages'],
  },
  {
    name: 'APTC, bad age at its index',
    op: APTC,
    rest: '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=2&ages=40,70',
    args: { zip: '77002', household_income: 40000, household_size: 2, ages: [40, 70] },
    status: 400,
    fields: ['ages.1'],
  },
  {
    name: 'APTC, county outside the ZIP',
    op: APTC,
    rest: '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=1&ages=40&county_fips=48157',
    args: { zip: '77002', household_income: 40000, household_size: 1, ages: [40], county_fips: '48157' },
    status: 400,
    fields: ['county_fips'],
  },
  // Households.
  {
    name: 'search for a household',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&ages=40,38,10&per_page=2',
    args: { zip: '77002', ages: [40, 38, 10], per_page: 2 },
    status: 200,
    facts: { 'members.length': 3, 'members.2.age': 10, 'members.2.charged': true, 'plans.length': 2 },
  },
  {
    name: 'search for a household, Free tier',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&ages=40,38,10',
    args: { zip: '77002', ages: [40, 38, 10] },
    tier: 'free',
    status: 402,
  },
  {
    name: 'search with age and ages',
    op: PLANS,
    rest: '/v1/health/plans?zip=77002&age=40&ages=40,38',
    args: { zip: '77002', age: 40, ages: [40, 38] },
    status: 400,
    fields: ['ages'],
  },
  {
    name: 'search with neither age nor ages, and no ZIP',
    op: PLANS,
    rest: '/v1/health/plans?per_page=2',
    args: { per_page: 2 },
    status: 400,
    fields: ['zip', 'age'],
  },
  {
    name: 'compare for a household',
    op: COMPARE,
    rest: `/v1/health/plans/compare?ids=${SILVER},${GULF}&zip=77002&ages=40,38,10`,
    args: { plan_ids: [SILVER, GULF], zip: '77002', ages: [40, 38, 10] },
    status: 200,
    facts: { 'plans.0.members.length': 3, 'plans.1.members.0.charged': true },
  },
  {
    name: 'plan detail priced for a household',
    op: DETAIL,
    rest: `/v1/health/plans/${SILVER}?zip=77002&ages=40,38,10`,
    args: { plan_id: SILVER, zip: '77002', ages: [40, 38, 10] },
    status: 200,
    facts: { 'pricing.members.length': 3, 'pricing.premium_with_credit': null, 'pricing.rating_area': 'Rating Area 10' },
  },
  {
    name: 'plan detail with a ZIP but no age',
    op: DETAIL,
    rest: `/v1/health/plans/${SILVER}?zip=77002`,
    args: { plan_id: SILVER, zip: '77002' },
    status: 400,
    fields: ['age'],
  },
  {
    name: 'OOP estimate for a household',
    op: OOP,
    rest: `/v1/health/plans/${SILVER}/oop-estimate?zip=77002&ages=40,38,10&scenario=medium`,
    args: { plan_id: SILVER, zip: '77002', ages: [40, 38, 10], scenario: 'medium' },
    status: 200,
    facts: { age: null, 'ages.length': 3, 'members.length': 3 },
  },
  // Facets and ranges of a search.
  {
    name: 'search stats',
    op: STATS,
    rest: '/v1/health/plans/stats?zip=77002&age=40',
    args: { zip: '77002', age: 40 },
    tier: 'free',
    status: 200,
    facts: { total: 7, 'location.state': undefined, state: 'TX', county_fips: '48201' },
  },
  {
    name: 'search stats, a Pro filter on Free',
    op: STATS,
    rest: '/v1/health/plans/stats?zip=77002&age=40&max_premium=500',
    args: { zip: '77002', age: 40, max_premium: 500 },
    tier: 'free',
    status: 402,
  },
  {
    name: 'search stats, income without household_size',
    op: STATS,
    rest: '/v1/health/plans/stats?zip=77002&age=40&income=30000',
    args: { zip: '77002', age: 40, income: 30000 },
    status: 400,
    fields: ['household_size'],
  },
  // Stand-alone dental plans: the fixture's one (statewide TX, a year without dental rates).
  {
    name: 'dental search',
    op: DENTAL,
    rest: '/v1/health/dental/plans?zip=77002&age=40',
    args: { zip: '77002', age: 40 },
    tier: 'free',
    status: 200,
    facts: {
      total: 1,
      '_embedded.dental_plans.0.id': '55555TX0050001-01',
      '_embedded.dental_plans.0.premium': null,
      '_embedded.dental_plans.0.premium_source': null,
      premium_note: 'No dental rates are loaded for TX 2025: premiums are not modeled for dental plans',
      premiums_loaded: false,
      state: 'TX',
    },
  },
  {
    name: 'dental search, unknown ZIP',
    op: DENTAL,
    rest: '/v1/health/dental/plans?zip=00000&age=40',
    args: { zip: '00000', age: 40 },
    status: 404,
    detail: 'ZIP code 00000 not found.',
  },
  {
    name: 'dental search, bad ZIP and no age',
    op: DENTAL,
    rest: '/v1/health/dental/plans?zip=7700',
    args: { zip: '7700' },
    status: 400,
    fields: ['age', 'zip'],
  },
  {
    name: 'dental search, a state without plan data',
    op: DENTAL,
    rest: `/v1/health/dental/plans?zip=${FIXTURE_ZIPS.honolulu}&age=40`,
    args: { zip: FIXTURE_ZIPS.honolulu, age: 40 },
    status: 404,
    detail: NO_HI,
  },
  {
    name: 'dental plan detail',
    op: DENTAL_DETAIL,
    rest: '/v1/health/dental/plans/55555TX0050001-01',
    args: { plan_id: '55555TX0050001-01' },
    tier: 'free',
    status: 200,
    facts: { id: '55555TX0050001-01', metal_level: 'high', plan_type: 'ppo', premiums_loaded: false, on_exchange: true },
  },
  {
    name: 'dental plan detail, a medical plan id',
    op: DENTAL_DETAIL,
    rest: `/v1/health/dental/plans/${SILVER}`,
    args: { plan_id: SILVER },
    status: 404,
    detail: `Dental plan ${SILVER} not found.`,
  },
  // ICHRA affordability.
  {
    name: 'ICHRA affordability',
    op: ICHRA,
    rest: '/v1/health/ichra/affordability?zip=77002&age=40&household_income=52000&hra_monthly=300',
    args: { zip: '77002', age: 40, household_income: 52000, hra_monthly: 300 },
    status: 200,
    facts: { required_contribution_percentage: 9.02, affordability_threshold: 390.87, 'location.state': 'TX', age: 40 },
  },
  {
    name: 'ICHRA, Free tier',
    op: ICHRA,
    rest: '/v1/health/ichra/affordability?zip=77002&age=40&household_income=52000&hra_monthly=300',
    args: { zip: '77002', age: 40, household_income: 52000, hra_monthly: 300 },
    tier: 'free',
    status: 402,
  },
  {
    name: 'ICHRA, HRA amount missing and a negative income',
    op: ICHRA,
    rest: '/v1/health/ichra/affordability?zip=77002&age=40&household_income=-5',
    args: { zip: '77002', age: 40, household_income: -5 },
    status: 400,
    fields: ['hra_monthly', 'household_income'],
  },
  {
    name: 'ICHRA, state without plan data',
    op: ICHRA,
    rest: `/v1/health/ichra/affordability?zip=${FIXTURE_ZIPS.honolulu}&age=40&household_income=52000&hra_monthly=300`,
    args: { zip: FIXTURE_ZIPS.honolulu, age: 40, household_income: 52000, hra_monthly: 300 },
    status: 404,
    detail: NO_HI,
  },
  // Crosswalk.
  {
    name: 'crosswalk',
    op: CROSSWALK,
    rest: '/v1/health/plans/crosswalk?plan_id=11111TX0010002&year=2025&state=TX',
    args: { plan_id: '11111TX0010002', year: 2025, state: 'TX' },
    status: 200,
    facts: { 'target_plan.plan_id': '11111TX0010001', 'source_plan.year': 2025 },
  },
  {
    name: 'crosswalk, year without data',
    op: CROSSWALK,
    rest: '/v1/health/plans/crosswalk?plan_id=11111TX0010002&year=2024&state=TX',
    args: { plan_id: '11111TX0010002', year: 2024, state: 'TX' },
    status: 400,
    fields: ['year'],
  },
  {
    name: 'crosswalk, plan of another state',
    op: CROSSWALK,
    rest: '/v1/health/plans/crosswalk?plan_id=11111TX0010002&year=2025&state=AK',
    args: { plan_id: '11111TX0010002', year: 2025, state: 'AK' },
    status: 400,
    fields: ['plan_id'],
  },
  {
    name: 'crosswalk, no entry',
    op: CROSSWALK,
    rest: '/v1/health/plans/crosswalk?plan_id=11111TX0010009&year=2025&state=TX',
    args: { plan_id: '11111TX0010009', year: 2025, state: 'TX' },
    status: 404,
  },
  {
    // The crosswalk is asked by state: one it has no data for is a 400 on state (spec), as the ZIP note says.
    name: 'crosswalk, state without plan data',
    op: CROSSWALK,
    rest: '/v1/health/plans/crosswalk?plan_id=12345HI0010001&year=2025&state=HI',
    args: { plan_id: '12345HI0010001', year: 2025, state: 'HI' },
    status: 400,
    fields: ['state'],
  },
  // ZIP lookup.
  {
    name: 'ZIP, two counties',
    op: ZIPS,
    rest: `/v1/health/zips/${FIXTURE_ZIPS.split}`,
    args: { zip: FIXTURE_ZIPS.split },
    tier: 'free',
    status: 200,
    facts: { 'locations.length': 2, multiple_areas: true },
  },
  {
    name: 'ZIP, no plans in the state',
    op: ZIPS,
    rest: `/v1/health/zips/${FIXTURE_ZIPS.honolulu}`,
    args: { zip: FIXTURE_ZIPS.honolulu },
    status: 200,
    facts: {
      plans_available: false,
      '_links.search': undefined,
      note: 'No plan data for HI in 2025: search, plan detail, compare and out-of-pocket answer 404 for this ZIP; the APTC estimate answers from published benchmark data only (benchmark_source benchmark_only, an approximation). The crosswalk has no HI plans. Its location and rating area are shown.',
    },
  },
  {
    name: 'ZIP, unknown',
    op: ZIPS,
    rest: '/v1/health/zips/12345',
    args: { zip: '12345' },
    status: 404,
    detail: 'ZIP code 12345 not found.',
  },
  {
    name: 'ZIP, malformed',
    op: ZIPS,
    rest: '/v1/health/zips/1234',
    args: { zip: '1234' },
    status: 400,
    fields: ['zip'],
    detail: 'Invalid ZIP code format. Expected 5 digits.',
  },
  // Issuers and years.
  {
    name: 'issuers',
    op: ISSUERS,
    rest: '/v1/health/issuers?state=TX',
    args: { state: 'TX' },
    tier: 'free',
    status: 200,
    facts: { total: 3, state: 'TX' },
  },
  {
    name: 'issuers, unknown state',
    op: ISSUERS,
    rest: '/v1/health/issuers?state=ZZ',
    args: { state: 'ZZ' },
    status: 400,
    fields: ['state'],
  },
  { name: 'issuers, no plan data', op: ISSUERS, rest: '/v1/health/issuers?state=HI', args: { state: 'HI' }, status: 404 },
  {
    name: 'issuers, missing state',
    op: ISSUERS,
    rest: '/v1/health/issuers',
    args: {},
    status: 400,
    fields: ['state'],
    detail: 'Missing required parameter state.',
  },
  {
    name: 'years',
    op: YEARS,
    rest: '/v1/health/years',
    args: {},
    tier: 'free',
    status: 200,
    facts: { available_years: [2025], current_year: 2025 },
  },
  {
    // Nothing to suggest: the caller learns the name is not merely misspelled.
    name: 'years, a parameter it does not take',
    op: YEARS,
    rest: '/v1/health/years?x=1',
    args: { x: 1 },
    tier: 'free',
    status: 400,
    fields: ['x'],
    detail: 'Unknown parameter x (this endpoint takes no query parameters).',
    toolDetail: 'Unknown parameter x (this tool takes no arguments).',
    toolMessages: ['Unknown parameter (this tool takes no arguments)'],
  },
];
