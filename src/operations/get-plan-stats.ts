/**
 * @module `GET /v1/health/plans/stats`: the facets and ranges of a search, for a
 * plan-shopping page's filters. It takes the search's location, age and filters; a search's page,
 * order and cursor have no meaning here and are refused as unknown. Counts per metal level, plan type,
 * issuer and HSA eligibility, and the premium and deductible ranges, are those of the plans the same
 * search matches: each facet adds up to `total` (src/engine/search-stats.ts).
 */
import { searchStats } from '../engine/search-stats.ts';
import { METAL_LEVELS, PLAN_TYPES } from '../engine/plan-record.ts';
import { locationFields, resolveLocation } from './location.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { compileQuery, type JsonSchema } from './query.ts';
import { householdRules, pricedAge, SEARCH_FILTER_PROPERTIES, searchPricing, type SearchFilterParams } from './search-plans.ts';
import { proParametersUsed, SEARCH_REQUIRED } from './search-parameters.ts';
import { HAL_LINK, LABELS, PRICED_AT, LOCATED_PAGE_REQUIRED } from './shared-schemas.ts';

const QUERY = compileQuery<SearchFilterParams>({
  schema: { type: 'object', properties: SEARCH_FILTER_PROPERTIES, required: [...SEARCH_REQUIRED] },
  lists: ['ages'],
  alternatives: [['age', 'ages']],
});

const facet = (value: JsonSchema, what: string) =>
  ({
    type: 'array',
    description: `Matching plans per ${what}, values with none left out; the counts add up to total`,
    items: {
      type: 'object',
      properties: { value, count: { type: 'integer', description: 'Matching plans with this value' } },
      required: ['value', 'count'],
      additionalProperties: false,
    },
  }) as const;

const range = (what: string) =>
  ({
    type: 'object',
    description: `Lowest and highest ${what} of the matching plans; both null when none has one`,
    properties: {
      min: { type: ['number', 'null'], description: `Lowest ${what}; null when no matching plan has one` },
      max: { type: ['number', 'null'], description: `Highest ${what}; null when no matching plan has one` },
    },
    required: ['min', 'max'],
    additionalProperties: false,
  }) as const;

export const STATS_RESPONSE = {
  type: 'object',
  properties: {
    _links: {
      type: 'object',
      description: 'HAL links: self, search (the plans these figures describe)',
      properties: { self: HAL_LINK, search: HAL_LINK },
      required: ['self', 'search'],
      additionalProperties: false,
    },
    total: { type: 'integer', description: 'Plans matching the search: the total of the same search' },
    facets: {
      type: 'object',
      description: 'Counts of the matching plans by value',
      properties: {
        metal_level: facet({ type: 'string', enum: [...METAL_LEVELS], description: 'Metal level' }, 'metal level'),
        plan_type: facet({ type: 'string', enum: [...PLAN_TYPES], description: 'Network type' }, 'plan type'),
        issuer: facet({ type: 'string', description: 'Issuer name' }, 'issuer (most plans first)'),
        hsa_eligible: facet({ type: 'boolean', description: 'HSA eligibility' }, 'HSA eligibility'),
      },
      required: ['metal_level', 'plan_type', 'issuer', 'hsa_eligible'],
      additionalProperties: false,
    },
    ranges: {
      type: 'object',
      description: 'Ranges of the matching plans',
      properties: {
        premium: range('monthly premium for the age (the household’s total with ages), dollars, before any credit'),
        deductible: range('individual deductible, dollars (the CSR variant’s for silver plans when income qualifies)'),
      },
      required: ['premium', 'deductible'],
      additionalProperties: false,
    },
    zip: { type: 'string', description: 'The ZIP code searched' },
    state: { type: 'string', description: 'Two-letter state code of the location priced' },
    ...PRICED_AT,
    ...LABELS,
  },
  required: ['_links', 'total', 'facets', 'ranges', ...LOCATED_PAGE_REQUIRED],
  additionalProperties: false,
} as const;

export const getPlanStatsOperation = defineOperation({
  id: 'getPlanStats',
  toolName: 'get_plan_stats',
  path: '/v1/health/plans/stats',
  summary: 'Facets and ranges of a search',
  description:
    'For a search’s ZIP, age (or household ages) and filters (no paging or order): how many plans match per metal level, plan type, issuer and HSA eligibility, and the lowest and highest premium and deductible. Each facet adds up to total, the total of the same search. Filters that are Pro on search are Pro here.',
  tier: 'free',
  query: QUERY,
  pathParams: [],
  proParams: proParametersUsed,
  check: householdRules,
  responseSchema: STATS_RESPONSE,
  handle(ctx, p, meta, scratch) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const { filters, csr, household } = searchPricing(yd, p, where.loc, scratch);
    const stats = searchStats(yd.ds, { listId: where.loc.listId, age: pricedAge(p), household, filters, csr });
    const query = echoQuery(QUERY.order, meta.raw);
    return {
      _links: {
        self: { href: `${ctx.baseUrl}/v1/health/plans/stats${query}`, type: 'application/json' },
        search: { href: `${ctx.baseUrl}/v1/health/plans${query}`, type: 'application/json' },
      },
      total: stats.total,
      facets: {
        metal_level: stats.metalLevels,
        plan_type: stats.planTypes,
        issuer: stats.issuers,
        hsa_eligible: stats.hsaEligible,
      },
      ranges: {
        premium: { min: cents(stats.premiumCents?.min), max: cents(stats.premiumCents?.max) },
        deductible: { min: stats.deductible?.min ?? null, max: stats.deductible?.max ?? null },
      },
      ...locationFields(where),
      plan_year: p.year,
      data_source: yd.dataSource(where.loc.state),
      data_freshness: yd.freshness(where.loc.state),
    };
  },
});

function cents(c: number | undefined): number | null {
  return c === undefined ? null : c / 100;
}
