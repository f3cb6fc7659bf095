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
  },
  required: ['_links', 'current_year', 'available_years'],
  additionalProperties: false,
} as const;

export const listPlanYearsOperation = defineOperation({
  id: 'getAvailableYears',
  toolName: 'list_plan_years',
  path: '/v1/health/years',
  summary: 'List available plan years',
  description: 'Plan years with loaded plan data; `current_year` is the default `year` of every other endpoint.',
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
    };
  },
});
