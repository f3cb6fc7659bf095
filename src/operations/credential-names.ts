/**
 * @module The query parameter names under which other APIs take a credential. Both fronts refuse
 * them: as an unknown parameter (unknown-name.ts), and in the 401 of a request whose only credential
 * is one of them (problems.ts), which names it since that key is what the caller believes it sent.
 */

/**
 * This service reads credentials only from the `Authorization` header: a URL is written to access
 * logs, proxy logs and browser history on its way.
 */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'access_token',
  'token',
  'auth',
  'authorization',
]);

/** Whether `name` is one under which other APIs take a credential in the query string. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAMES.has(name.toLowerCase());
}
