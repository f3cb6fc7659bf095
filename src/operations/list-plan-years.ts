/** @module `GET /v1/health/years`: the plan years loaded and the default one. */
import { defineOperation } from './operation.ts';
import { compileQuery } from './query.ts';
import { YEARS_RESPONSE } from './schemas/common.ts';

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
