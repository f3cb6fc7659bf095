/**
 * @module Which redirect URIs a client may register (OAuth 2.0 Security BCP, RFC 9700 §2.1 and §4.1;
 * native apps per RFC 8252 §7). Registration is open to anyone, so every accepted URI is a place this
 * server may send a browser: only destinations that protect the code in transit or never leave the
 * person's machine are accepted.
 *
 * Accepted:
 * - `https:` on any host (a "web" or a "native" client with a claimed https URI);
 * - `http:` only on a loopback host, `127.0.0.1`, `[::1]` or `localhost` (RFC 8252 §7.3; any port,
 *   which the provider matches exactly for web clients and ignores for native loopback ones);
 * - a private-use scheme (`com.example.app:/callback`) only for `application_type: "native"` and only
 *   when the scheme has a dot, i.e. is a reverse domain name as RFC 8252 §7.1 requires: a bare word
 *   such as `myapp:` is claimed by whichever app asks first.
 *
 * Refused: any other `http:`, fragments, user information (`https://user@host/`), wildcards in the
 * host, and `javascript:`, `data:`, `vbscript:`, `file:`, `blob:`, `about:` whatever the client type.
 * Also what is not an RFC 3986 URI although WHATWG URL parsing (browsers, the checks below) repairs
 * it: spaces, control characters (a newline is stripped by the parser, so `http://localhost\n/` would
 * pass as loopback), non-ASCII characters (an IDN host is registered in its xn-- form), and `https:`
 * without `//` (`https:evil.example`). What is registered is what the authorization request must
 * repeat byte for byte, so it has to be one unambiguous spelling.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);
/** RFC 3986 scheme syntax with at least one dot (reverse domain name). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]*[a-z0-9]:$/;
/** Printable ASCII without space: the characters an RFC 3986 URI (percent-encoded where needed) consists of. */
const URI_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * Why `uri` may not be registered by a client of `applicationType`, or undefined when it may. The
 * reason starts with "redirect_uris", which the provider turns into the `invalid_redirect_uri` error
 * code (RFC 7591 §3.2.2) rather than `invalid_client_metadata`.
 */
export function redirectUriProblem(uri: string, applicationType: string): string | undefined {
  const url = URL.parse(uri);
  if (url === null) return 'redirect_uris must only contain valid uris';
  if (!URI_CHARACTERS.test(uri))
    return 'redirect_uris must be URIs: no spaces, control or non-ASCII characters (percent-encode them; an international domain name in its xn-- form)';
  if (uri.includes('#')) return 'redirect_uris must not contain fragments';
  const protocol = url.protocol.toLowerCase();
  if (FORBIDDEN_SCHEMES.has(protocol)) return `redirect_uris must not use the ${protocol.slice(0, -1)} URI scheme`;
  if (url.username !== '' || url.password !== '') return 'redirect_uris must not contain user information';
  if (url.hostname.includes('*') || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\*/i.test(uri)) return 'redirect_uris must not contain wildcards';
  if ((protocol === 'https:' || protocol === 'http:') && !/^https?:\/\//i.test(uri))
    return `redirect_uris must write ${protocol}// before the host`;
  if (protocol === 'https:') {
    if (url.hostname === '') return 'redirect_uris must name a host';
    return undefined;
  }
  if (protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
      ? undefined
      : 'redirect_uris using http must point at a loopback address (127.0.0.1, [::1] or localhost); use https for anything else';
  }
  if (applicationType === 'native' && PRIVATE_USE_SCHEME.test(protocol)) return undefined;
  return applicationType === 'native'
    ? 'redirect_uris of native clients must use https, http on a loopback address, or a reverse-domain private-use scheme (com.example.app:)'
    : 'redirect_uris must use https, or http on a loopback address (127.0.0.1, [::1] or localhost)';
}

/**
 * The first problem among a client's registered redirect URIs, or undefined. Anything that is not a
 * list of strings is left for the provider's own schema check, which words that error itself.
 */
export function redirectUrisProblem(value: unknown, applicationType: unknown): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const type = typeof applicationType === 'string' ? applicationType : 'web';
  for (const uri of value) {
    if (typeof uri !== 'string') return undefined;
    const problem = redirectUriProblem(uri, type);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
