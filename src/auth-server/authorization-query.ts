/**
 * @module The two adjustments of an authorization request before the provider sees it: a default
 * scope, and prompt=consent with offline_access.
 */
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';

/**
 * Scope used when an authorization request carries none (RFC 6749 §3.3 lets the server pick a
 * default). Without it the provider would grant nothing and answer access_denied.
 */
export const DEFAULT_SCOPE = OAUTH_SCOPES.join(' ');

/**
 * Adjusts an authorization request's query before the provider sees it; undefined when unchanged.
 *
 * - No `scope` → DEFAULT_SCOPE (RFC 6749 §3.3 allows a server default; the provider would otherwise
 *   grant nothing and answer access_denied).
 * - `offline_access` without `prompt=consent` → `consent` is added to `prompt`. OpenID Connect (and so
 *   oidc-provider) silently drops offline_access unless consent is prompted for; the MCP SDK adds
 *   prompt=consent itself, other OAuth 2.1 clients do not know the rule and would never get a refresh
 *   token. Forcing the consent prompt only means the person sees this server's page on each such
 *   authorization (log in, or one "Allow" click when already signed in). `prompt=none` is left alone:
 *   it cannot be combined with consent, and offline_access is then dropped as OIDC specifies.
 *
 * Repeated parameters are left for the provider to reject.
 */
export function normalizeAuthorizationQuery(query: string): string | undefined {
  const params = new URLSearchParams(query);
  if (params.getAll('scope').length > 1 || params.getAll('prompt').length > 1) return undefined;
  let changed = false;
  if (!params.has('scope')) {
    params.set('scope', DEFAULT_SCOPE);
    changed = true;
  }
  const scopes = (params.get('scope') ?? '').split(' ');
  const prompts = (params.get('prompt') ?? '').split(' ').filter(Boolean);
  if (scopes.includes('offline_access') && !prompts.includes('consent') && !prompts.includes('none')) {
    params.set('prompt', [...prompts, 'consent'].join(' '));
    changed = true;
  }
  return changed ? params.toString() : undefined;
}
