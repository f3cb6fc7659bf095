/**
 * @module The error catalogue: every problem the API can answer, with its stable slug, status and
 * title (docs/compatibility.md#problem-catalogue). Operations throw {@link ProblemError}; the fronts turn it into an RFC 9457
 * body (REST) or a tool error result (MCP) with the same members.
 *
 * Every problem both fronts can give is declared here, once, so REST and MCP word it alike; a problem
 * only one front gives is named in that front's module (src/http/front-problems.ts,
 * src/mcp/front-problems.ts). test/docs/problem-texts.test.ts keeps detail literals out of the others.
 */

import type { PaidTier } from '../policy/tiers.ts';
import { isCredentialName } from './credential-names.ts';

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

/** The 402 of an endpoint above the caller's tier: the operation's own sentence (`tierDetail`), or the plain one. */
export function endpointTierProblem(endpointDetail: string | undefined): ProblemSpec {
  return {
    kind: 'paymentRequired',
    detail: endpointDetail ?? 'This endpoint requires a Pro subscription.',
    required_tier: 'pro',
    upgrade: true,
  };
}

/** The 402 of Pro parameters sent by a caller below Pro, naming every one sent. */
export function proParametersProblem(names: readonly string[]): ProblemSpec {
  const many = names.length > 1;
  return {
    kind: 'paymentRequired',
    detail: `The parameter${many ? 's' : ''} ${names.join(', ')} require${many ? '' : 's'} a Pro subscription.`,
    required_tier: 'pro',
    upgrade: true,
  };
}

/** The 401 of a credential that is missing or not accepted; the challenge (`WWW-Authenticate`) says which. */
export const UNAUTHORIZED: ProblemSpec = { kind: 'unauthorized', detail: 'Missing or invalid API key.' };

/**
 * The 401 of a request without an `Authorization` header: the plain one, or, when the key was sent in
 * the query as other APIs take it (`?api_key=`, an MCP endpoint URL configured as `/mcp?api_key=…`),
 * one that says where it goes. Authentication comes before validation (docs/compatibility.md#request-processing-order), so this 401
 * is all such a caller ever sees: without the hint the key they can see in their own URL is "missing".
 */
export function missingCredential(query: Iterable<readonly [string, string]>): ProblemSpec {
  for (const [name] of query) {
    if (isCredentialName(name)) {
      return {
        kind: 'unauthorized',
        detail: `${UNAUTHORIZED.detail} The query parameter ${name} is not read: send the key in the Authorization header (Authorization: Bearer <key>).`,
      };
    }
  }
  return UNAUTHORIZED;
}

/** The daily quota is spent (429); `upgrade` links the plans when configured. */
export const RATE_LIMITED: ProblemSpec = {
  kind: 'rateLimited',
  detail: 'Daily request limit reached. Resets at midnight UTC.',
  upgrade: true,
};

/** Why a 503 refuses an API key: the shared state store lost its backend (Redis unreachable, or emptied) and cannot vouch for it. */
export const API_KEY_UNVERIFIABLE = 'The service cannot verify this API key right now (its shared state store is unavailable)';

/** The 503 of a credential the shared state store cannot vouch for now; `reason` says which check could not be made. */
export function stateUnavailable(reason: string): ProblemSpec {
  return { kind: 'unavailable', detail: `${reason}. Retry shortly.` };
}

/** The 503 of an API key while the shared state store is unavailable (state-store.ts). */
export const STATE_UNAVAILABLE: ProblemSpec = stateUnavailable(API_KEY_UNVERIFIABLE);

/** The 404 of a path no route serves. */
export function noRoute(path: string): ProblemSpec {
  return { kind: 'notFound', detail: `No route matches ${path}.` };
}

/** The 405 of a method the path does not take; `allowed` is the `Allow` field's value (`GET, HEAD`). */
export function methodNotAllowed(method: string, allowed: string): ProblemSpec {
  return { kind: 'methodNotAllowed', detail: `Method ${method} is not allowed. Allowed: ${allowed}.` };
}

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
