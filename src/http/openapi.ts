/**
 * @module OpenAPI 3.1 document generated from the operations: the same JSON Schemas that validate
 * requests and serialize responses, so the published contract cannot drift from the code. Shared
 * resource schemas are published as named components (openapi-components.ts) and every response
 * carries an example taken from the served build (openapi-examples.ts).
 */
import { PACKAGE_VERSION } from '../package-version.ts';
import type { Operation } from '../operations/operation.ts';
import type { JsonSchema } from '../operations/query.ts';
import { componentRef, componentSchemas, withRefs } from './openapi-components.ts';
import type { OpenApiExamples } from './openapi-examples.ts';
import { SAFE_REQUEST_ID_PATTERN } from './request-id.ts';

const STATUS_TEXT: Record<string, string> = {
  '304': 'Not modified (If-None-Match matched the ETag)',
  '400': 'Validation error: every violation in `errors`',
  '401': 'Missing or invalid API key',
  '402': 'The endpoint or a parameter requires a higher tier',
  '404': 'Resource not found',
  '429': 'Daily request limit reached',
};

/** Tag of each operation: how the docs page groups them. */
const TAGS = [
  {
    name: 'Plans',
    description: 'Plan search, detail, comparison, cost estimates and year-to-year crosswalk.',
    operations: ['searchPlans', 'getPlanStats', 'getPlanById', 'comparePlans', 'estimateOop', 'getCrosswalk'],
  },
  {
    name: 'Subsidies',
    description: 'Premium tax credit (APTC) estimates for a household, and the ICHRA affordability test for an employee.',
    operations: ['calculateAptc', 'checkIchraAffordability'],
  },
  {
    name: 'Dental',
    description: 'Stand-alone dental plans by ZIP, apart from medical plans; premiums only where dental rates are loaded.',
    operations: ['searchDentalPlans', 'getDentalPlanById'],
  },
  { name: 'Geography', description: 'ZIP codes, counties and rating areas.', operations: ['lookupZip'] },
  {
    name: 'Reference',
    description: 'Plan years and issuers loaded in the served data build.',
    operations: ['getAvailableYears', 'listIssuers'],
  },
] as const;

const LIST_HINT =
  'Repeat the parameter (`name=a&name=b`, what generated clients send) or give a comma-separated list (`name=a,b`): both are the same request';

/** A 404 is answered only by operations that look something up by a value the caller gives. */
const NO_NOT_FOUND = new Set(['getAvailableYears']);

export interface OpenApiOptions {
  /** Origin of the `servers` entry, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Version of the data build served, published as `x-data-build`; absent from the build-independent contract. */
  readonly build?: string;
  /** Response examples by operation; none in the build-independent contract. */
  readonly examples?: OpenApiExamples;
}

/**
 * The operation's query and path parameters, then its aliases, as OpenAPI parameter objects, declared so
 * that every request the server accepts validates (a validating gateway in front must not refuse one):
 *
 * - a list parameter is `form`/`explode` (repeated: what generated clients send), and each of its items
 *   may also be a comma-separated list, which the server accepts too (`ids=A,B`); its item-count limits
 *   are in the description, since a comma list counts as one item to a validator;
 * - a required parameter with an alias (`household_income`, `income`) is declared optional, with the
 *   requirement in the description: OpenAPI cannot say "one of these two";
 * - an optional query parameter allows an empty value, which the server takes as the parameter absent.
 */
function parametersOf(op: Operation<never>, built: Readonly<Record<string, string>> | undefined): Array<Record<string, unknown>> {
  const props = (op.query.spec.schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((op.query.spec.schema.required ?? []) as string[]);
  const aliasesOf = (name: string): string[] =>
    Object.entries(op.query.spec.aliases ?? {})
      .filter(([, canonical]) => canonical === name)
      .map(([alias]) => alias);
  const parameters = Object.entries(props).map(([name, schema]) => {
    const {
      description,
      example,
      'x-pro': pro,
      ...rest
    } = schema as JsonSchema & { description?: string; example?: unknown; 'x-pro'?: boolean };
    const isPath = op.pathParams.includes(name);
    const list = op.query.spec.lists?.includes(name) === true;
    const aliases = aliasesOf(name);
    const needed = isPath || required.has(name);
    // With the served build's example request, the examples are exactly its values: together they are
    // one valid request (no `age` beside its `ages`), the one that answered the 200 example, and none
    // names data the build does not hold. Without one (no data for it), the fixed examples.
    const value = built === undefined ? undefined : built[name];
    const shown = built === undefined ? example : value === undefined ? undefined : exampleValue(value, rest, list);
    const sentences = [
      description ?? name,
      ...(list ? [LIST_HINT.replaceAll('name', name), countLimits(rest)] : []),
      ...(needed && aliases.length > 0 ? [`Required: give ${name} or its alias ${aliases.join(' or ')}.`] : []),
    ].filter((t) => t !== '');
    return {
      name,
      in: isPath ? 'path' : 'query',
      required: needed && aliases.length === 0,
      // docs/compatibility.md#transport-and-methods: an empty value (`county_fips=`) is the parameter absent, which an optional
      // one may be; a required one answers 400 `Required`.
      ...(!isPath && !needed ? { allowEmptyValue: true } : {}),
      ...(description !== undefined || list || aliases.length > 0 ? { description: sentences.join('. ').replace(/\.\./g, '.') } : {}),
      ...(pro === true ? { 'x-required-tier': 'pro' } : {}),
      ...(shown !== undefined ? { example: shown } : {}),
      ...(list ? { style: 'form', explode: true } : {}),
      schema: list ? listSchema(rest) : rest,
    };
  });
  for (const [alias, canonical] of Object.entries(op.query.spec.aliases ?? {})) {
    const list = op.query.spec.lists?.includes(canonical) === true;
    const schema = (props[canonical] ?? {}) as JsonSchema;
    parameters.push({
      name: alias,
      in: 'query',
      required: false,
      ...(required.has(canonical) ? {} : { allowEmptyValue: true }),
      description: `Alias of ${canonical}`,
      ...(list ? { style: 'form', explode: true } : {}),
      schema: list ? listSchema(schema) : schema,
    });
  }
  return parameters;
}

/** A value of the example request as the parameter's type: lists as arrays of their items. */
function exampleValue(text: string, schema: JsonSchema, list: boolean): unknown {
  if (list) return text.split(',').map((t) => exampleValue(t, (schema.items ?? {}) as JsonSchema, false));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.includes('integer') || types.includes('number')) return Number(text);
  if (types.includes('boolean')) return text === 'true';
  return text;
}

/** "Give 2 to 4." from a list schema's item-count limits, or nothing. */
function countLimits(schema: JsonSchema): string {
  const min = schema.minItems as number | undefined;
  const max = schema.maxItems as number | undefined;
  if (min !== undefined && max !== undefined) return `Give ${min} to ${max} items.`;
  if (min !== undefined) return `Give at least ${min}.`;
  return max !== undefined ? `Give at most ${max}.` : '';
}

/**
 * A list parameter's schema: items that are one value, or several as one comma-separated text (the
 * server splits it), without the count limits a comma list would defeat.
 */
function listSchema(schema: JsonSchema): JsonSchema {
  const { minItems: _min, maxItems: _max, items, ...rest } = schema;
  return {
    ...rest,
    items: { anyOf: [items, { type: 'string', pattern: '^[^,]*(,[^,]*)+$', description: 'Several values, comma-separated' }] },
  };
}

export function buildOpenApi(operations: ReadonlyArray<Operation<never>>, options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const examples = options.examples?.responses.get(op.id) ?? {};
    const parameters = parametersOf(op, options.examples?.parameters.get(op.id));
    const content = (type: string, schema: unknown, status: string): Record<string, unknown> => ({
      [type]: { schema, ...(examples[status] !== undefined ? { example: examples[status] } : {}) },
    });
    const problem = (status: string): Record<string, unknown> => content('application/problem+json', componentRef('Problem'), status);
    const responses: Record<string, unknown> = {
      '200': {
        description: 'OK',
        headers: {
          ETag: { schema: { type: 'string' }, description: 'Weak ETag derived from the data build and the request' },
          Link: {
            schema: { type: 'string' },
            description: 'The `_links` of the body and the OpenAPI document (`service-desc`), as RFC 8288 links',
          },
          'X-Request-Id': {
            schema: { type: 'string', pattern: SAFE_REQUEST_ID_PATTERN },
            description:
              'Identifies the request in logs; quote it when reporting a problem. The caller’s own X-Request-Id when it sent one of 1–128 characters of A–Z, a–z, 0–9, `.`, `_`, `:` and `-` (so one id follows a request through a gateway); otherwise a UUID the server made',
          },
          'RateLimit-Limit': { schema: { type: 'integer' }, description: 'Requests per UTC day of the caller’s tier' },
          'RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Requests left today' },
          'RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix time of the next 00:00 UTC' },
        },
        content: content('application/json', withRefs(op.responseSchema), '200'),
      },
      '304': { description: STATUS_TEXT['304'] },
      '400': { description: STATUS_TEXT['400'], content: problem('400') },
      '401': {
        description: STATUS_TEXT['401'],
        content: problem('401'),
        headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'The Bearer challenge (RFC 6750)' } },
      },
      ...(NO_NOT_FOUND.has(op.id) ? {} : { '404': { description: STATUS_TEXT['404'], content: problem('404') } }),
      '429': {
        description: STATUS_TEXT['429'],
        content: problem('429'),
        headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until the limit resets' } },
      },
    };
    if (op.tier !== 'free' || op.proParams !== undefined) responses['402'] = { description: STATUS_TEXT['402'], content: problem('402') };
    const tags = TAGS.filter((t) => (t.operations as readonly string[]).includes(op.id)).map((t) => t.name);
    const tier = op.tier !== 'free' ? { 'x-required-tier': op.tier } : {};
    // HEAD is served on every route: the GET's status and headers, no body (RFC 9110 §9.3.2).
    const head = (id: string): Record<string, unknown> => ({
      operationId: `${id}Head`,
      summary: `${op.summary} (headers only)`,
      description: `The status and headers GET ${op.path} would answer, without a body. Counts against the daily quota like GET.`,
      tags,
      ...tier,
      parameters,
      responses: Object.fromEntries(
        Object.entries(responses).map(([status, r]) => {
          const { content: _c, ...headOnly } = r as Record<string, unknown>;
          return [status, headOnly];
        }),
      ),
    });
    const item = (id: string, description: string): Record<string, unknown> => ({
      get: { operationId: id, summary: op.summary, description, tags, ...tier, parameters, responses },
      head: head(id),
    });
    paths[op.path] = item(op.id, op.description);
    for (const alias of op.aliasPaths ?? []) {
      const id = `${op.id}At${
        alias
          .split('/')
          .filter((p) => p !== '' && !p.startsWith('{'))
          .pop()
          ?.replace(/^./, (c) => c.toUpperCase()) ?? 'Alias'
      }`;
      paths[alias] = item(id, `${op.description} The same operation as ${op.path}, under another path.`);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Health Plan Data Service',
      version: PACKAGE_VERSION,
      description:
        'ACA marketplace health plan data: plans, premiums, subsidies, geography. Responses are HAL JSON; errors are RFC 9457 problem details. Every request needs an API key (`Authorization: Bearer hpd_…`); tiers and daily limits are on the plans page.',
      license: { name: 'Proprietary: terms on the plans page', url: `${options.baseUrl}/pricing#terms` },
      ...(options.build !== undefined ? { 'x-data-build': options.build } : {}),
    },
    servers: [{ url: options.baseUrl }],
    security: [{ bearer: [] }],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key hpd_ + 40 hex characters' } },
    },
  };
}
