/**
 * @module Assertions shared by the end-to-end REST tests: every 200 body is validated against its
 * operation's response schema and every problem body against PROBLEM_RESPONSE, with the right media type.
 */
import assert from 'node:assert/strict';
import { Ajv, type ValidateFunction } from 'ajv';
import { OPERATIONS, type OperationId } from '../../src/operations/index.ts';
import { PROBLEM_RESPONSE } from '../../src/operations/shared-schemas.ts';

export const BASE = 'http://api.test';
export const UPGRADE = 'https://hpd.test/pricing';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();
for (const op of OPERATIONS) validators.set(op.id, ajv.compile(op.responseSchema));
const problemValidator = ajv.compile(PROBLEM_RESPONSE);

export type { OperationId };

/** A parsed JSON body (tests index into it freely). */
export type Body = any;

/** Asserts a 200 JSON response valid against the operation's response schema; returns the body. */
export async function expectOk(res: Response, opId: OperationId, label = ''): Promise<Body> {
  const text = await res.text();
  assert.equal(res.status, 200, `${label} expected 200, got ${res.status}: ${text.slice(0, 400)}`);
  assert.equal(res.headers.get('content-type'), 'application/json', `${label} content-type`);
  const body = JSON.parse(text) as Body;
  const validate = validators.get(opId);
  assert.ok(validate !== undefined, `no operation ${opId}`);
  const valid: boolean = validate(body);
  assert.ok(valid, `${label} ${opId} body violates its schema: ${ajv.errorsText(validate.errors)}`);
  return body;
}

export interface ProblemExpectation {
  /** Exact `errors[].field` list, in order (400 only). */
  fields?: readonly string[];
  detail?: string | RegExp;
  /** Defaults to the request path without query. */
  instance?: string;
}

const SLUGS: Record<number, string> = {
  400: 'validation-error',
  401: 'unauthorized',
  402: 'payment-required',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  429: 'rate-limit-exceeded',
  500: 'internal-error',
  503: 'service-unavailable',
};

/**
 * Asserts an RFC 9457 problem: status, media type, schema, slug `type`, `instance` = path and, on 400,
 * the `errors[].field` list. Returns the body.
 */
export async function expectProblem(res: Response, status: number, path: string, exp: ProblemExpectation = {}): Promise<Body> {
  const text = await res.text();
  assert.equal(res.status, status, `${path}: expected ${status}, got ${res.status}: ${text.slice(0, 400)}`);
  assert.equal(res.headers.get('content-type'), 'application/problem+json', `${path}: problem content-type`);
  const body = JSON.parse(text) as Body;
  const valid: boolean = problemValidator(body);
  assert.ok(valid, `${path}: problem body violates PROBLEM_RESPONSE: ${ajv.errorsText(problemValidator.errors)}`);
  assert.equal(body.type, `${BASE}/problems/${SLUGS[status]}`);
  assert.equal(body.status, status);
  assert.equal(body.instance, exp.instance ?? path.split('?')[0]);
  if (status === 400) {
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0, `${path}: a 400 always lists errors`);
  } else {
    assert.equal(body.errors, undefined, `${path}: errors only on 400`);
  }
  if (exp.fields !== undefined) {
    assert.deepEqual(
      (body.errors as Array<{ field: string }>).map((e) => e.field),
      [...exp.fields],
      `${path}: error fields ${JSON.stringify(body.errors)}`,
    );
  }
  if (exp.detail instanceof RegExp) assert.match(body.detail, exp.detail);
  else if (exp.detail !== undefined) assert.equal(body.detail, exp.detail);
  return body;
}

/** The message of the error on `field`. */
export function messageOf(body: Body, field: string): string {
  const e = (body.errors as Array<{ field: string; message: string }>).find((x) => x.field === field);
  assert.ok(e !== undefined, `no error on ${field}: ${JSON.stringify(body.errors)}`);
  return e.message;
}

/** Path and query of an absolute link on the configured base URL. */
export function pathOf(href: string): string {
  assert.ok(href.startsWith(`${BASE}/`), `${href} is not on ${BASE}`);
  return href.slice(BASE.length);
}

/** Parses an RFC 8288 Link header into [target, rel] pairs, in order. */
export function parseLinkHeader(header: string | null): Array<[string, string]> {
  assert.ok(header !== null, 'Link header present');
  const out: Array<[string, string]> = [];
  const re = /<([^>]*)>\s*;\s*rel="([^"]*)"/g;
  for (let m = re.exec(header); m !== null; m = re.exec(header)) out.push([m[1]!, m[2]!]);
  return out;
}

/** Unix seconds of the 00:00 UTC following `ms`. */
export function nextMidnightSeconds(ms: number): number {
  return (Math.floor(ms / 86_400_000) + 1) * 86_400;
}
