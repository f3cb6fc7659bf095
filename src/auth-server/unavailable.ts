/**
 * @module The authorization server's answer while the shared Redis cannot serve (unreachable, stalled,
 * read-only, or between primaries during a failover): 503 with Retry-After and OAuth's
 * `temporarily_unavailable` error (RFC 6749 §4.1.2.1), as JSON for clients and as a page for browsers.
 * Never 500 `server_error`: the client did nothing wrong, and the same request works once Redis is back.
 *
 * oidc-provider turns every error it does not know into `server_error` and emits `server_error`; the
 * listener marks the request when the cause is Redis, and the middleware rewrites the answer after
 * the provider has written it (its error handlers run inside the route, below this middleware).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KoaContext } from 'oidc-provider';
import { isRedisUnavailable } from '../policy/redis-failure.ts';
import { PAGE_HEADERS, renderErrorPage } from './pages.ts';

/** Seconds a client is asked to wait: a Sentinel failover takes a few. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;
const DESCRIPTION = 'the authorization server cannot reach its storage right now; retry shortly';
const PAGE = {
  title: 'Temporarily unavailable',
  message: 'The sign-in service cannot reach its storage right now. Try again in a few seconds.',
};

const unavailable = new WeakSet<object>();

/** The provider's `server_error` listener: true (and the request marked) when the cause is Redis. */
export function markIfRedisUnavailable(ctx: unknown, err: unknown): boolean {
  if (!isRedisUnavailable(err)) return false;
  if (typeof ctx === 'object' && ctx !== null) unavailable.add(ctx);
  return true;
}

/** The OAuth error body of a 503, for clients that asked for JSON (or nothing in particular). */
function unavailableJson(): string {
  return JSON.stringify({ error: 'temporarily_unavailable', error_description: DESCRIPTION });
}

/** Provider middleware: rewrites a marked request's answer (a page, a JSON error or a redirect) into 503. */
export async function unavailableMiddleware(ctx: KoaContext, next: () => Promise<void>): Promise<void> {
  await next();
  if (!unavailable.has(ctx)) return;
  ctx.remove('location');
  ctx.status = 503;
  ctx.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
  ctx.set('cache-control', 'no-store');
  if (ctx.accepts('json', 'html') === 'html') {
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.type = 'html';
    ctx.body = renderErrorPage({ ...PAGE, code: 'temporarily_unavailable' });
  } else {
    ctx.type = 'json';
    ctx.body = unavailableJson();
  }
}

/** The same answer as a page, for what is served outside the provider (interactions, routes.ts). */
export function sendUnavailablePage(res: ServerResponse): void {
  const html = renderErrorPage({ ...PAGE, code: 'temporarily_unavailable' });
  res.writeHead(503, {
    ...PAGE_HEADERS,
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
    'content-length': String(Buffer.byteLength(html)),
  });
  res.end(html);
}

/**
 * The 503 for a request refused before the provider sees it: a page for a browser (its Accept names
 * HTML), the OAuth JSON error otherwise, as the middleware answers. The request body is drained unread.
 */
export function sendUnavailable(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  if ((req.headers.accept ?? '').includes('text/html')) {
    sendUnavailablePage(res);
    return;
  }
  const body = unavailableJson();
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
