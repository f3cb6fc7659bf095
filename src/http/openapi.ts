/**
 * @module OpenAPI 3.1 document generated from the operations: the same JSON Schemas that validate
 * requests and serialize responses, so the published contract cannot drift from the code.
 */
import type { Operation } from '../operations/operation.ts';
import type { JsonSchema } from '../operations/query.ts';
import { PROBLEM_RESPONSE } from '../operations/schemas/common.ts';

const STATUS_TEXT: Record<string, string> = {
  '304': 'Not modified (If-None-Match matched the ETag)',
  '400': 'Validation error: every violation in `errors`',
  '401': 'Missing or invalid API key',
  '402': 'The endpoint or a parameter requires a higher tier',
  '404': 'Resource not found',
  '429': 'Daily request limit reached',
};

export function buildOpenApi(operations: ReadonlyArray<Operation<never>>, baseUrl: string, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const props = (op.query.spec.schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((op.query.spec.schema.required ?? []) as string[]);
    const parameters = Object.entries(props).map(([name, schema]) => {
      const { description, example, 'x-pro': pro, ...rest } = schema as JsonSchema & { description?: string; example?: unknown; 'x-pro'?: boolean };
      const isPath = op.pathParams.includes(name);
      const list = op.query.spec.lists?.includes(name) === true;
      return {
        name,
        in: isPath ? 'path' : 'query',
        required: isPath || required.has(name),
        ...(description !== undefined ? { description } : {}),
        ...(pro === true ? { 'x-required-tier': 'pro' } : {}),
        ...(example !== undefined ? { example } : {}),
        ...(list ? { style: 'form', explode: false } : {}),
        schema: rest,
      };
    });
    for (const [alias, canonical] of Object.entries(op.query.spec.aliases ?? {})) {
      parameters.push({ name: alias, in: 'query', required: false, description: `Alias of ${canonical}`, schema: (props[canonical] ?? {}) as JsonSchema });
    }
    const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
    const responses: Record<string, unknown> = {
      '200': {
        description: 'OK',
        headers: {
          ETag: { schema: { type: 'string' }, description: 'Weak ETag derived from the data build and the request' },
          Link: { schema: { type: 'string' } },
          'X-Request-Id': { schema: { type: 'string', format: 'uuid' } },
          'RateLimit-Limit': { schema: { type: 'integer' } },
          'RateLimit-Remaining': { schema: { type: 'integer' } },
          'RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix time of the next 00:00 UTC' },
        },
        content: { 'application/json': { schema: op.responseSchema } },
      },
      '304': { description: STATUS_TEXT['304'] },
      '400': { description: STATUS_TEXT['400'], content: problem },
      '401': { description: STATUS_TEXT['401'], content: problem, headers: { 'WWW-Authenticate': { schema: { type: 'string' } } } },
      '404': { description: STATUS_TEXT['404'], content: problem },
      '429': { description: STATUS_TEXT['429'], content: problem, headers: { 'Retry-After': { schema: { type: 'integer' } } } },
    };
    if (op.tier !== 'free' || op.proParams !== undefined) responses['402'] = { description: STATUS_TEXT['402'], content: problem };
    paths[op.path] = {
      get: {
        operationId: op.id,
        summary: op.summary,
        description: op.description,
        ...(op.tier !== 'free' ? { 'x-required-tier': op.tier } : {}),
        parameters,
        responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Health Plan Data Service',
      version,
      description: 'ACA marketplace health plan data: plans, premiums, subsidies, geography. Responses are HAL JSON; errors are RFC 9457 problem details.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_RESPONSE },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key hpd_ + 40 hex characters' } },
    },
  };
}
