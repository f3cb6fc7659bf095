/**
 * @module No silent error redirects for dynamically registered clients (RFC 9700 §4.11.2).
 *
 * Registration is open, so anyone can register `https://evil.example/landing` and then hand people
 * `/auth?client_id=…&redirect_uri=https://evil.example/landing&scope=nonsense`: by OAuth's rules the
 * error goes back to the redirect_uri, and this trusted origin would forward the browser to theirs
 * with no page in between, an open redirector for phishing. So when the authorization endpoint
 * (the first request, before any page of ours) fails for a client that was not configured by the
 * operator, the browser gets an HTML page saying what was refused, with a link to continue to the
 * client's origin carrying the error, instead of a 303.
 *
 * Not affected: operator-configured clients (trusted, their errors redirect as before); errors after
 * the person acted on our page (the `resume` route: "Cancel" → access_denied); and successful
 * authorizations, which always need a log-in on our page first, or a signed-in browser that has
 * already approved that very client. `prompt=none` errors (login_required …) of dynamically
 * registered clients are caught as well: a silent check is the same redirect with the same risk.
 *
 * How: oidc-provider has no per-client switch for error redirects. Its authorization error handler
 * (lib/shared/authorization_error_handler.js, 9.13.3) emits `authorization.error` (or `server_error`)
 * synchronously and only then reads `err.allow_redirect` to choose between the redirect and
 * `renderError`. The listener clears that flag, and `renderError` draws the page for errors it
 * cleared. flow.test.ts pins the behaviour, so a provider upgrade that reorders this fails a test.
 */
import { errors, type KoaContext } from 'oidc-provider';

/** Where the "Continue" link of the page leads, in the client's response mode. */
export type ContinueTarget = { method: 'get'; href: string } | { method: 'post'; action: string; fields: Array<[string, string]> };

interface Withheld {
  clientLabel: string;
  redirectUri: string | undefined;
  responseMode: string | undefined;
}

function stringParam(params: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = params?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export class ErrorRedirectGuard {
  readonly #staticClientIds: ReadonlySet<string>;
  /** Errors whose redirect was withheld; weak, so nothing outlives its request. */
  readonly #withheld = new WeakMap<object, Withheld>();

  constructor(staticClientIds: Iterable<string>) {
    this.#staticClientIds = new Set(staticClientIds);
  }

  /** Listener for the provider's `authorization.error` and `server_error` events. */
  readonly onAuthorizationError = (ctx: unknown, err: unknown): void => {
    if (!(err instanceof errors.OIDCProviderError) || !err.allow_redirect) return;
    const oidc = (ctx as KoaContext | undefined)?.oidc;
    // Only the first request: on `resume` the person has already been on our page and acted.
    if (oidc?.route !== 'authorization') return;
    const client = oidc.client;
    if (client === undefined || this.#staticClientIds.has(client.clientId)) return;
    // The same parameter source the provider's handler uses for its redirect.
    const c = ctx as KoaContext;
    const params = oidc.params ?? (c.method === 'POST' ? oidc.body : c.query);
    const redirectUri = stringParam(params, 'redirect_uri');
    err.allow_redirect = false;
    this.#withheld.set(err, {
      clientLabel: client.clientName ?? client.clientId,
      // Only a registered URI may be offered as the way back; the provider checks the same.
      redirectUri: redirectUri !== undefined && client.redirectUriAllowed(redirectUri) ? redirectUri : undefined,
      responseMode: stringParam(params, 'response_mode'),
    });
  };

  /**
   * For an error whose redirect was withheld: the client's label, the origin it wanted to return to,
   * and the link that delivers `out` (error, error_description, state, iss) there; else undefined.
   */
  refusal(
    err: unknown,
    out: Record<string, unknown>,
  ): { clientLabel: string; origin: string | undefined; continueTo: ContinueTarget | undefined } | undefined {
    if (typeof err !== 'object' || err === null) return undefined;
    const withheld = this.#withheld.get(err);
    if (withheld === undefined) return undefined;
    const url = withheld.redirectUri === undefined ? null : URL.parse(withheld.redirectUri);
    if (url === null) return { clientLabel: withheld.clientLabel, origin: undefined, continueTo: undefined };
    const fields = Object.entries(out).filter((e): e is [string, string] => typeof e[1] === 'string');
    const origin = url.origin !== 'null' ? url.origin : `${url.protocol}`;
    if (withheld.responseMode === 'form_post')
      return { clientLabel: withheld.clientLabel, origin, continueTo: { method: 'post', action: url.href, fields } };
    if (withheld.responseMode === 'fragment') {
      url.hash = new URLSearchParams(fields).toString();
    } else {
      for (const [k, v] of fields) url.searchParams.set(k, v);
    }
    return { clientLabel: withheld.clientLabel, origin, continueTo: { method: 'get', href: url.href } };
  }
}
