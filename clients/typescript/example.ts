/**
 * The typed client of the README: openapi-fetch over the generated types (schema.d.ts). Paths,
 * parameters and bodies are checked by the compiler; `ages` is sent as `ages=40&ages=38`, openapi-fetch's
 * default array style, which the API accepts as it accepts `ages=40,38`.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type PlanDetail = components['schemas']['PlanDetail'];

export interface ExampleResult {
  readonly detail: PlanDetail;
  readonly monthlyCredit: number;
}

export async function searchThenDetail(baseUrl: string, apiKey: string, zip: string): Promise<ExampleResult> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  const search = await client.GET('/v1/health/plans', { params: { query: { zip, age: 40, metal_level: 'silver', per_page: 5 } } });
  if (search.error !== undefined) throw new Error(`search: ${search.error.detail}`);
  const first = search.data._embedded.plans[0];
  if (first === undefined) throw new Error(`no silver plan at ${zip}`);

  const detail = await client.GET('/v1/health/plans/{plan_id}', { params: { path: { plan_id: first.id } } });
  if (detail.error !== undefined) throw new Error(`detail: ${detail.error.detail}`);

  const aptc = await client.GET('/v1/health/plans/aptc-estimate', {
    params: { query: { zip, household_income: 45_000, household_size: 2, ages: [40, 38] } },
  });
  if (aptc.error !== undefined) throw new Error(`aptc: ${aptc.error.detail}`);

  return { detail: detail.data, monthlyCredit: aptc.data.aptc_amount };
}
