/**
 * @module Problems the REST front answers itself, before any operation runs. Shared by the server,
 * which answers them, and the OpenAPI document, whose examples must be the very bodies a client gets.
 */
import type { ProblemSpec } from '../operations/problems.ts';
import { isCredentialName } from '../operations/unknown-name.ts';

export const UNAUTHORIZED: ProblemSpec = { kind: 'unauthorized', detail: 'Missing or invalid API key.' };

/**
 * The 401 of a request without an `Authorization` header: the plain one, or, when the key was sent in
 * the query as other APIs take it (`?api_key=`), one that says where it goes. Authentication comes
 * before validation (docs/compatibility.md#request-processing-order), so this 401 is all such a caller ever sees: without the hint
 * the key they can see in their own URL is "missing".
 */
export function missingCredential(query: ReadonlyArray<readonly [string, string]>): ProblemSpec {
  const sent = query.find(([name]) => isCredentialName(name));
  if (sent === undefined) return UNAUTHORIZED;
  return {
    kind: 'unauthorized',
    detail: `${UNAUTHORIZED.detail} The query parameter ${sent[0]} is not read: send the key in the Authorization header (Authorization: Bearer <key>).`,
  };
}

export const RATE_LIMITED: ProblemSpec = {
  kind: 'rateLimited',
  detail: 'Daily request limit reached. Resets at midnight UTC.',
  upgrade: true,
};

export const BODY_NOT_ALLOWED: ProblemSpec = {
  kind: 'validation',
  detail: 'GET and HEAD requests must not carry a body (Content-Length or Transfer-Encoding).',
  errors: [{ field: '(body)', message: 'A body is not allowed' }],
};

/**
 * The 400 of a request whose framing leaves its end in doubt (src/http/request-framing.ts); its
 * connection is closed after it, which the detail says so a client knows to reconnect.
 */
export function framingProblem(reason: string): ProblemSpec {
  return {
    kind: 'validation',
    detail: `${reason} Where the request ends cannot be told for certain (RFC 9112 §6.3): the connection is closed.`,
    errors: [{ field: '(framing)', message: reason }],
  };
}
