/**
 * @module Problems the REST front answers itself, before any operation runs. Shared by the server,
 * which answers them, and the OpenAPI document, whose examples must be the very bodies a client gets.
 */
import type { ProblemSpec } from '../operations/problems.ts';

export const UNAUTHORIZED: ProblemSpec = { kind: 'unauthorized', detail: 'Missing or invalid API key.' };

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
