/** @module `GET /v1/health/issuers?state=XX`: issuers of a state with their on-exchange plan counts. */
import { noPlanData } from './location.ts';
import { planDataYears } from './plan-data-years.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { validationProblem } from './problems.ts';
import { compileQuery } from './query.ts';
import { LABELS, LINKS_OF, P } from './shared-schemas.ts';

interface Params {
  state: string;
  year: number;
}

/** The 50 states and DC: the state codes a plan can carry. */
export const JURISDICTIONS: ReadonlySet<string> = new Set([
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'DC',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
]);

export const ISSUERS_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    state: { type: 'string', description: 'Two-letter state code' },
    year: { type: 'integer', description: 'Plan year' },
    issuers: {
      type: 'array',
      description: 'Issuers with plans in the state and year, by name',
      items: {
        type: 'object',
        properties: {
          issuer_id: { type: 'string', description: '5-digit HIOS issuer ID' },
          name: { type: 'string', description: 'Issuer marketing name' },
          plan_count: { type: 'integer', description: 'Plans the issuer offers in the state and year' },
        },
        required: ['issuer_id', 'name', 'plan_count'],
        additionalProperties: false,
      },
    },
    total: { type: 'integer', description: 'Number of issuers' },
    data_source: LABELS.data_source,
    data_freshness: LABELS.data_freshness,
  },
  required: ['_links', 'state', 'year', 'issuers', 'total', 'data_source', 'data_freshness'],
  additionalProperties: false,
} as const;

export const listIssuersOperation = defineOperation({
  id: 'listIssuers',
  toolName: 'list_issuers',
  path: '/v1/health/issuers',
  summary: 'List issuers of a state',
  description:
    'Issuers with plan data in a state and year, ordered by name; `plan_count` counts on-exchange standard plans (-01 variants).',
  tier: 'free',
  query: compileQuery<Params>({
    schema: {
      type: 'object',
      properties: {
        state: {
          type: 'string',
          minLength: 2,
          maxLength: 2,
          pattern: '^[A-Z]{2}$',
          description: 'Two-letter state code (50 states and DC)',
          example: 'FL',
        },
        year: P.year,
      },
      required: ['state'],
    },
  }),
  pathParams: [],
  responseSchema: ISSUERS_RESPONSE,
  cacheable: true,
  handle(ctx, p, meta) {
    if (!JURISDICTIONS.has(p.state)) throw validationProblem([{ field: 'state', message: `Unknown state code ${p.state}` }]);
    const yd = ctx.registry.get(p.year)!;
    if (!yd.statesWithPlans.has(p.state)) throw noPlanData(p.state, p.year, '', planDataYears(ctx.registry, p.state));
    const issuers = yd.ds.issuers(p.state);
    return {
      _links: { self: { href: `${ctx.baseUrl}/v1/health/issuers${echoQuery(['state', 'year'], meta.raw)}`, type: 'application/json' } },
      state: p.state,
      year: p.year,
      issuers: issuers.map((i) => ({ issuer_id: i.issuer_id, name: i.name, plan_count: i.plan_count })),
      total: issuers.length,
      data_source: yd.dataSource(p.state),
      data_freshness: yd.freshness(p.state),
    };
  },
});
