/**
 * @module Problems only the REST front answers, before any operation runs (the problems both fronts
 * give are in src/operations/problems.ts). Shared by the server, which answers them, and the OpenAPI
 * document, whose examples must be the very bodies a client gets.
 */
import type { ProblemSpec } from '../operations/problems.ts';

/** The 406 of an `Accept` that excludes JSON: an operation's route writes nothing else. */
export const NOT_ACCEPTABLE: ProblemSpec = { kind: 'notAcceptable', detail: 'This resource is available as application/json only.' };

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

/**
 * The 429 of a request from a proxied client address that already holds `max` connections: it names the
 * setting, since the remedy (reuse connections) is the client's and the limit the operator's.
 */
export function tooManyConnections(max: number): ProblemSpec {
  return {
    kind: 'rateLimited',
    detail: `Your address holds ${max} connections to this server (HPD_REST_MAX_CONNECTIONS_PER_ADDRESS): reuse them, or close some before opening more.`,
  };
}
