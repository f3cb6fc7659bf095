/**
 * @module The authorization server's routes once the provider is configured: the log-in and consent
 * interactions (interactions.ts), CORS for dynamic registration, the adjusted /auth query, and
 * everything else handed to the provider's Koa callback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import { normalizeAuthorizationQuery } from './authorization-query.ts';
import { handleInteraction, INTERACTION_PATH, type InteractionAction, type InteractionContext } from './interactions.ts';
import { PAGE_HEADERS, renderErrorPage } from './pages.ts';
import { errorPageFor, ROUTES } from './provider-config.ts';
import { clientAddress } from './client-address.ts';
import type { RegistrationLimit } from './registration-limit.ts';
import { sendUnavailable, sendUnavailablePage } from './unavailable.ts';
import { isRedisUnavailable } from '../policy/redis-failure.ts';
import type { StoreHealth } from '../policy/state-store.ts';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** What the provider answers from memory (metadata, public keys): served whatever the state store's health. */
const STORAGE_FREE = /^\/(?:\.well-known\/|jwks$)/;

/**
 * Set on every answer before anything else writes it; pages replace them with PAGE_HEADERS' stricter
 * set. The redirects matter most: the one to the client carries the code in its Location and the
 * others an interaction id (which, with the cookie, is what a form post must name), and a policy on a
 * redirect governs the Referer of the request it leads to. Nothing here is meant to be framed.
 */
const BASE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
});

/**
 * With an https issuer (a TLS-terminating proxy in front), browsers are told to come back over https
 * only, for a year: the log-in page must not be reachable by a downgrade to http. This host only, not
 * its subdomains, which are the operator's to decide. Browsers ignore it over http.
 */
const HSTS = 'max-age=31536000';

export function createRoutes(
  provider: Provider,
  interactions: InteractionContext,
  registrations: RegistrationLimit,
  onError: (err: unknown) => void,
  storeHealth: () => StoreHealth,
): RequestHandler {
  const koa = provider.callback();
  const https = provider.issuer.startsWith('https:');
  const failed = (res: ServerResponse, err: unknown): void => {
    onError(err);
    if (!res.headersSent) {
      const html = renderErrorPage(errorPageFor('server_error'));
      res.writeHead(500, { ...PAGE_HEADERS, 'content-length': String(Buffer.byteLength(html)) }).end(html);
    }
  };
  const provide = (req: IncomingMessage, res: ServerResponse): void => {
    koa(req, res).catch((err: unknown) => {
      if (isRedisUnavailable(err) && !res.headersSent) sendUnavailablePage(res);
      else failed(res, err);
    });
  };
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    for (const [name, value] of Object.entries(BASE_HEADERS)) res.setHeader(name, value);
    if (https) res.setHeader('strict-transport-security', HSTS);
    // Everything but the public metadata and keys is per person or per request; the provider leaves
    // some redirects (after a form post) and its 404 without a cache policy.
    if (!STORAGE_FREE.test(pathname)) res.setHeader('cache-control', 'no-store');
    // Not only unreachable: an emptied Redis answers, and a sign-up, client or grant written into it now
    // would be lost again by the restore the operator is about to make (or would resurrect as garbage).
    if (storeHealth() !== 'ok' && !STORAGE_FREE.test(pathname)) {
      sendUnavailable(req, res);
      return;
    }
    const m = INTERACTION_PATH.exec(pathname);
    if (m !== null) {
      void handleInteraction(req, res, m[1], m[2] as InteractionAction | undefined, interactions);
      return;
    }
    if (pathname === ROUTES.registration && registrationPreflight(req, res)) return;
    if (pathname === ROUTES.authorization && req.method === 'GET') {
      const rewritten = normalizeAuthorizationQuery(q === -1 ? '' : url.slice(q + 1));
      if (rewritten !== undefined) req.url = `${pathname}?${rewritten}`;
    }
    if (pathname === ROUTES.registration && req.method === 'POST') {
      registrationAdmitted(req, res, registrations).then(
        (admitted) => {
          if (admitted) provide(req, res);
        },
        (err: unknown) => {
          if (isRedisUnavailable(err) && !res.headersSent) sendUnavailable(req, res);
          else failed(res, err);
        },
      );
      return;
    }
    provide(req, res);
  };
}

/**
 * Registration is open to anyone but not unbounded: past the per-address or the server's limit a 429 (RFC 6585) with
 * Retry-After and an OAuth error body, as the provider's own errors are. Resolves false when refused
 * (answered here); a Redis failure rejects, and the caller's catch answers 503.
 */
async function registrationAdmitted(req: IncomingMessage, res: ServerResponse, limit: RegistrationLimit): Promise<boolean> {
  const refusal = await limit.take(clientAddress(req) ?? 'unknown');
  if (refusal === null) return true;
  const wait = refusal.wait;
  const whose = refusal.scope === 'address' ? 'from this address' : 'on this server';
  const body = JSON.stringify({
    error: 'temporarily_unavailable',
    error_description: `too many client registrations ${whose}: retry in ${wait} s`,
  });
  res.writeHead(429, {
    'content-type': 'application/json; charset=utf-8',
    'retry-after': String(wait),
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
  req.resume();
  return false;
}

/**
 * Registration is open to anyone, so letting browser-based clients (e.g. MCP Inspector) reach it
 * cross-origin grants nothing new; the provider sets no CORS headers there itself. True when the
 * request was a preflight, answered here.
 */
function registrationPreflight(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  res.setHeader('access-control-allow-origin', typeof origin === 'string' ? origin : '*');
  res.setHeader('vary', 'Origin');
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204, {
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': String(req.headers['access-control-request-headers'] ?? 'content-type'),
    'access-control-max-age': '3600',
  });
  res.end();
  return true;
}
