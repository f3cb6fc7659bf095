/** @module `GET /v1/health/years`: the plan years loaded and the default one. */
import { defineOperation } from './operation.ts';
import { compileQuery } from './query.ts';
import { LINKS_OF } from './shared-schemas.ts';

export const YEARS_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    current_year: { type: 'integer', description: 'The default plan year of every other endpoint (the newest loaded)' },
    available_years: { type: 'array', items: { type: 'integer' }, description: 'Plan years with loaded plan data, oldest first' },
    years: {
      type: 'array',
      description: 'Each loaded plan year with the states it has plan data for, oldest first',
      items: {
        type: 'object',
        properties: {
          year: { type: 'integer', description: 'Plan year' },
          states: {
            type: 'array',
            items: { type: 'string' },
            description: 'States with plan data this year (two-letter codes, sorted); other states answer ZIP lookups only',
          },
          real_premium_states: {
            type: 'array',
            items: { type: 'string' },
            description: 'States whose premiums come from issuers’ rate filings (a Rate PUF): data_source puf_data',
          },
          modeled_premium_states: {
            type: 'array',
            items: { type: 'string' },
            description: 'States whose premiums are modeled from SLCSP benchmarks: data_source puf_data+modeled_premiums',
          },
        },
        required: ['year', 'states', 'real_premium_states', 'modeled_premium_states'],
        additionalProperties: false,
      },
    },
  },
  required: ['_links', 'current_year', 'available_years', 'years'],
  additionalProperties: false,
} as const;

export const listPlanYearsOperation = defineOperation({
  id: 'getAvailableYears',
  toolName: 'list_plan_years',
  path: '/v1/health/years',
  summary: 'List available plan years',
  description:
    'Plan years with loaded plan data, each with the states it covers and whether their premiums are real or modeled; `current_year` is the default `year` of every other endpoint.',
  tier: 'free',
  query: compileQuery<Record<string, never>>({ schema: { type: 'object', properties: {} } }),
  pathParams: [],
  responseSchema: YEARS_RESPONSE,
  cacheable: true,
  handle(ctx) {
    return {
      _links: { self: { href: `${ctx.baseUrl}/v1/health/years`, type: 'application/json' } },
      current_year: ctx.registry.currentYear,
      available_years: [...ctx.registry.years],
      years: ctx.registry.years.map((year) => {
        const premiums = [...(ctx.registry.get(year)?.premiumsByState ?? [])];
        return {
          year,
          states: premiums.map(([s]) => s),
          real_premium_states: premiums.filter(([, p]) => p === 'rate_puf').map(([s]) => s),
          modeled_premium_states: premiums.filter(([, p]) => p === 'modeled').map(([s]) => s),
        };
      }),
    };
  },
});
