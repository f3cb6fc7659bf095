/**
 * @module Problems only the MCP endpoint answers (the problems both fronts give are in
 * src/operations/problems.ts): what the REST front's uWS router refuses before any handler, or does
 * not check at all (browser origins).
 */
import type { ProblemSpec } from '../operations/problems.ts';

/** The 400 of a request target that is neither origin-form nor absolute-form. */
export const INVALID_TARGET: ProblemSpec = {
  kind: 'validation',
  detail: 'The request target is not a valid URL.',
  errors: [{ field: 'request-target', message: 'is not a valid origin-form or absolute-form target' }],
};

/**
 * The 401 of an OAuth access token the verifier refuses (expired, revoked, issued for another
 * resource): only this endpoint takes one, and its reason is what the client must act on. A refused
 * API key or a malformed credential gets the 401 both fronts give (problems.ts UNAUTHORIZED).
 */
export function accessTokenRejected(reason: string): ProblemSpec {
  return { kind: 'unauthorized', detail: `${reason}.` };
}

/** The 403 of a browser origin not in HPD_MCP_ALLOWED_ORIGINS (DNS rebinding: MCP transport, "Security Warning"). */
export function originNotAllowed(origin: string): ProblemSpec {
  return { kind: 'forbidden', detail: `Origin ${origin} is not allowed.` };
}
