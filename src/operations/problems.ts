/**
 * @module The error catalogue: every problem the API can answer, with its stable slug, status and
 * title (docs/compatibility.md#problem-catalogue). Operations throw {@link ProblemError}; the fronts turn it into an RFC 9457
 * body (REST) or a tool error result (MCP) with the same members.
 */

import type { PaidTier } from '../policy/tiers.ts';

export const PROBLEM_TYPES = {
  validation: { slug: 'validation-error', status: 400, title: 'Validation Error' },
  unauthorized: { slug: 'unauthorized', status: 401, title: 'Unauthorized' },
  paymentRequired: { slug: 'payment-required', status: 402, title: 'Payment Required' },
  forbidden: { slug: 'forbidden', status: 403, title: 'Forbidden' },
  notFound: { slug: 'not-found', status: 404, title: 'Not Found' },
  methodNotAllowed: { slug: 'method-not-allowed', status: 405, title: 'Method Not Allowed' },
  notAcceptable: { slug: 'not-acceptable', status: 406, title: 'Not Acceptable' },
  rateLimited: { slug: 'rate-limit-exceeded', status: 429, title: 'Rate Limit Exceeded' },
  internal: { slug: 'internal-error', status: 500, title: 'Internal Server Error' },
  unavailable: { slug: 'service-unavailable', status: 503, title: 'Service Unavailable' },
} as const;
export type ProblemKind = keyof typeof PROBLEM_TYPES;

export interface FieldError {
  /** Dot-delimited path of the parameter (`ages.2`). */
  readonly field: string;
  readonly message: string;
}

/** What a parameter rule answers when it holds (shared: a valid request allocates no list). */
export const NO_ERRORS: readonly FieldError[] = Object.freeze([]);

/** The members of a problem that do not depend on where it is served. */
export interface ProblemSpec {
  readonly kind: ProblemKind;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
  readonly required_tier?: PaidTier;
  /** Set by the front from configuration on 402 and 429. */
  readonly upgrade?: boolean;
}

/** RFC 9457 body as served. */
export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance?: string;
  readonly errors?: readonly FieldError[];
  readonly required_tier?: PaidTier;
  readonly upgrade?: string;
}

/**
 * The 500 of every front (REST, MCP): what failed is in the server's logs, found by the request id
 * the response carries in X-Request-Id.
 */
export const INTERNAL_ERROR: ProblemSpec = {
  kind: 'internal',
  detail: 'An unexpected error occurred. Quote the X-Request-Id when contacting support.',
};

export class ProblemError extends Error {
  readonly spec: ProblemSpec;
  constructor(spec: ProblemSpec) {
    super(spec.detail);
    this.name = 'ProblemError';
    this.spec = spec;
  }
}

/** Pairs of parameters of which one is required (`age`, or a household's `ages`; query.ts `alternatives`). */
export type Alternatives = readonly (readonly [string, string])[];

export function validationProblem(errors: readonly FieldError[], alternatives: Alternatives = []): ProblemError {
  return new ProblemError({ kind: 'validation', detail: validationDetail(errors, alternatives), errors });
}

/**
 * The detail of a validation problem, written from its errors (and the operation's alternative pairs)
 * alone, so a front that renames fields (MCP tool arguments) writes it again from the renamed errors
 * and the two never disagree.
 */
export function validationDetail(errors: readonly FieldError[], alternatives: Alternatives = []): string {
  if (errors.length !== 1) return 'Invalid input.';
  const e = errors[0]!;
  // "Missing age" alone sends a caller pricing a household to the wrong fix: name the other way.
  const other = e.message === 'Required' ? alternatives.find(([a]) => a === e.field)?.[1] : undefined;
  if (other !== undefined) return `Missing required parameter ${e.field}: give ${e.field} (one person) or ${other} (a household).`;
  return singleErrorDetail(e);
}

export function notFound(detail: string): ProblemError {
  return new ProblemError({ kind: 'notFound', detail });
}

/** The message of a name the endpoint does not take, followed by a suggestion (query.ts). */
export const UNKNOWN_PARAMETER = 'Unknown parameter';

/** The one-sentence detail of a single validation error (docs/compatibility.md#detail-strings). */
function singleErrorDetail(e: FieldError): string {
  // Only a malformed ZIP gets the documented format sentence; a repeated or misplaced one says what it is.
  if (e.field === 'zip' && (e.message === 'Invalid' || e.message.startsWith('String must')))
    return 'Invalid ZIP code format. Expected 5 digits.';
  if (e.message === 'Required') return `Missing required parameter ${e.field}.`;
  // "Unknown parameter metal (did you mean metal_level?).": the name is not a field that is invalid.
  if (e.message.startsWith(UNKNOWN_PARAMETER)) return `${UNKNOWN_PARAMETER} ${e.field}${e.message.slice(UNKNOWN_PARAMETER.length)}.`;
  return `Invalid ${e.field}: ${e.message}.`;
}

export function toProblemBody(spec: ProblemSpec, baseUrl: string, instance: string, upgradeUrl: string): ProblemBody {
  const t = PROBLEM_TYPES[spec.kind];
  return {
    type: `${baseUrl}/problems/${t.slug}`,
    title: t.title,
    status: t.status,
    detail: spec.detail,
    instance,
    ...(spec.errors !== undefined ? { errors: spec.errors } : {}),
    ...(spec.required_tier !== undefined ? { required_tier: spec.required_tier } : {}),
    ...(spec.upgrade === true ? { upgrade: upgradeUrl } : {}),
  };
}
