/**
 * @module The REST front on uWebSockets.js: a thin adapter from HTTP to the operations.
 *
 * Every handler is synchronous (all data is in RAM), so it copies what it needs from the request,
 * runs the fixed order of api-contract §1.2 and writes status, headers and body in one corked pass.
 * Every route is registered through {@link on}, which attaches the abort handler uWS requires before
 * anything is written, and bodies are ended with backpressure (src/http/response-writer.ts), so no
 * client behaviour can abort the process or make it buffer without bound. Everything a response needs
 * besides the operation's body (request id, ETag, Link, rate-limit, CORS) is added here, once, for all
 * routes.
 */
import { OPERATIONS } from '../operations/index.ts';
import { etagFor, execute, type Operation, type OperationContext } from '../operations/operation.ts';
import { TIER_RANK } from '../policy/tiers.ts';
import { PROBLEM_TYPES, toProblemBody, type ProblemSpec } from '../operations/problems.ts';
import type { Tier } from '../policy/tiers.ts';
import type { DataRegistry } from '../operations/data-registry.ts';
import { asLiveRegistry, type LiveRegistry } from '../operations/live-registry.ts';
import { AuthCache } from '../policy/auth-cache.ts';
import type { Quota, QuotaDecision } from '../policy/quota.ts';
import { forEachRateLimitHeader, rateLimitHeaders } from '../policy/rate-limit-headers.ts';
import type { StateStore } from '../policy/state-store.ts';
import type { AccessLog } from '../observability/access-log.ts';
import { OTHER_ROUTE, RequestMetrics } from '../observability/request-metrics.ts';
import { acceptsJson, ifNoneMatchMatches, linkHeader } from './conditional.ts';
import { BODY_NOT_ALLOWED, RATE_LIMITED, UNAUTHORIZED } from './front-problems.ts';
import { pages } from './docs-pages.ts';
import { buildOpenApi } from './openapi.ts';
import { collectExamples } from './openapi-examples.ts';
import { queryPairs } from './query-string.ts';
import { HEALTH_BODY, readinessOf, readyzAnswer } from '../observability/health-probes.ts';
import { requestIdFrom } from './request-id.ts';
import { createConnectionCap } from './connection-cap.ts';
import { ResponseCache } from './response-cache.ts';
import { endWithBody, ignoreAbort } from './response-writer.ts';
import { compileSerializer, fragmentSerializer, serializeProblem } from './serializers.ts';
import { listenExclusive, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.ts';

export interface ServerConfig {
  /** A live registry follows newly published builds; a plain one is served as it is. */
  readonly registry: DataRegistry | LiveRegistry;
  readonly store: StateStore;
  readonly quota: Quota;
  /** Origin for absolute links, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Pricing page named in 402 and 429 problems. */
  readonly upgradeUrl: string;
  readonly clock?: () => number;
  /** Called with unexpected errors (500s); defaults to stderr. */
  readonly onError?: (err: unknown, requestId: string) => void;
  /** Byte budget of the response cache of years, ZIPs, issuers and plan detail; default 64 MiB. */
  readonly responseCacheBytes?: number;
  /** Concurrent connections; further ones are closed as soon as they open. Default 10,000. */
  readonly maxConnections?: number;
  /** Names this server in log lines ('rest', or 'rest worker N'). */
  readonly name?: string;
  /** This thread's request counters (/metrics); absent: nothing is counted. */
  readonly metrics?: RequestMetrics;
  /** Absent: no access log. */
  readonly accessLog?: AccessLog;
}

export const DEFAULT_REST_MAX_CONNECTIONS = 10_000;

export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

export interface RestServer {
  /** Listens on `port` (0 = any free port) at `host`; resolves with the port. */
  listen(port: number, host?: string): Promise<number>;
  /**
   * The app's descriptor, for an acceptor app in another thread to hand it connections
   * (src/http/rest-pool.ts); a server used this way does not listen itself.
   */
  appDescriptor(): unknown;
  /** Fails readiness (/readyz 503) and closes connections after each response; still serving. */
  drain(): void;
  /** Stops accepting, fails readiness, answers in-flight requests with `Connection: close`, then closes. */
  close(): Promise<void>;
  /** What the response cache holds: canonical requests and the bytes counted for them. */
  responseCacheStats(): { readonly entries: number; readonly bytes: number };
}

const EXPOSED = 'ETag, Link, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, WWW-Authenticate';
const CACHE = 'private, no-cache';
const JSON_TYPE = 'application/json';
const PROBLEM_TYPE = 'application/problem+json';
const REALM = 'Bearer realm="health-api"';
const INVALID_TOKEN = `${REALM}, error="invalid_token", error_description="The API key is missing, malformed, unknown or revoked"`;
/** The shared state store lost its backend (Redis) and cannot vouch for this credential (state-store.ts). */
const STATE_UNAVAILABLE: ProblemSpec = { kind: 'unavailable', detail: 'The service cannot verify this API key right now (its shared state store is unreachable). Retry shortly.' };
const STATE_RETRY_AFTER = '5';

interface Reply {
  status: number;
  headers: Array<[string, string]>;
  body: string | Buffer;
}

/** A 200 (or 304) of an operation: written header by header, with no intermediate arrays. */
interface OkReply {
  readonly response: CachedResponse;
  readonly quota: QuotaDecision;
  readonly notModified: boolean;
}

interface Route {
  readonly pattern: string;
  readonly op: Operation<never>;
  readonly serializer: (body: Record<string, unknown>) => string | Buffer;
  /** Whether finished 200s are kept in the response cache (the operation is `cacheable`). */
  readonly cached: boolean;
  /** The path template counted in /metrics and the access log (never the raw path: bounded labels). */
  readonly template: string;
  readonly metricId: number;
}

/** A finished 200 of a cacheable operation: everything but the per-caller headers. */
interface CachedResponse {
  readonly etag: string;
  /**
   * ETag and Link as written: bytes for a response kept in a cache (uWS copies bytes as they are but
   * converts every string it is given to UTF-8, on every hit), strings for one written once.
   */
  readonly etagValue: string | Buffer;
  readonly linkValue: string | Buffer;
  /** Encoded once: a hit hands uWS bytes, not a string to encode again. */
  readonly body: Buffer;
  /** What the response cache counts for it. */
  readonly bytes: number;
}

function toBytes(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

const STATUS_LINE_OK = '200 OK';
const STATUS_LINE_NOT_MODIFIED = '304 Not Modified';

const STATUS_LINE: Record<number, string> = {
  200: STATUS_LINE_OK,
  304: STATUS_LINE_NOT_MODIFIED,
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** Header names and fixed values of every 200, encoded once (see {@link CachedResponse}). */
const B = {
  requestId: Buffer.from('x-request-id'),
  allowOrigin: Buffer.from('access-control-allow-origin'),
  any: Buffer.from('*'),
  exposeHeaders: Buffer.from('access-control-expose-headers'),
  exposed: Buffer.from(EXPOSED),
  contentType: Buffer.from('content-type'),
  json: Buffer.from(JSON_TYPE),
  etag: Buffer.from('etag'),
  cacheControl: Buffer.from('cache-control'),
  cache: Buffer.from(CACHE),
  vary: Buffer.from('vary'),
  authorization: Buffer.from('Authorization'),
  link: Buffer.from('link'),
  ok: Buffer.from(STATUS_LINE_OK),
  notModified: Buffer.from(STATUS_LINE_NOT_MODIFIED),
} as const;

/** Whether a GET or HEAD request announces a body (any Transfer-Encoding, a Content-Length other than 0). */
function hasBody(req: HttpRequest): boolean {
  const length = req.getHeader('content-length');
  return req.getHeader('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

/**
 * Percent-decodes a path parameter. A malformed escape (`%ZZ`) is kept as sent, so validation answers
 * it (400 for a ZIP, 404 for a plan id); decodeURIComponent would throw inside the uWS handler and
 * take the whole process down.
 */
function decodePathParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function createRestServer(config: ServerConfig): RestServer {
  const clock = config.clock ?? Date.now;
  const live = asLiveRegistry(config.registry);
  /** The context of the snapshot being served, made once per snapshot. */
  let ctx: OperationContext = { registry: live.current(), baseUrl: config.baseUrl };
  const serviceDesc = `${config.baseUrl}/v1/openapi.json`;
  // Encoded once per build, when first asked for: a string body would be converted to a fresh buffer
  // on every request, and its examples run each operation once (openapi-examples.ts).
  const openapiFor = (c: OperationContext): Buffer => {
    const serialize = (op: Operation<never>, body: Record<string, unknown>): string | Buffer => routes.find((r) => r.op === op)!.serializer(body);
    const examples = collectExamples({ operations: OPERATIONS, ctx: c, upgradeUrl: config.upgradeUrl, serialize });
    return Buffer.from(JSON.stringify(buildOpenApi(OPERATIONS, { baseUrl: config.baseUrl, build: c.registry.version, examples })));
  };
  let openapiBody: Buffer | null = null;
  const healthBody = Buffer.from(HEALTH_BODY);
  const onError = config.onError ?? ((err, id) => process.stderr.write(`request ${id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`));
  const auth = new AuthCache(config.store);
  const cache = new ResponseCache<CachedResponse>(config.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES);
  // A new build: new ETags, new bodies. Everything derived from the old snapshot goes with it.
  live.onSwap((next) => {
    ctx = { registry: next, baseUrl: config.baseUrl };
    openapiBody = null;
    cache.clear();
  });
  let draining = false;
  let listenSocket: us_listen_socket | null = null;
  const app: TemplatedApp = uws.App();

  // uWS closes a connection that sends nothing after ~10 s but accepts without limit: the cap keeps a
  // flood of connections from taking every file descriptor of the process (MCP and the authorization
  // server included). uWS reports each opened (+1) and closed (-1) connection here.
  const maxConnections = config.maxConnections ?? DEFAULT_REST_MAX_CONNECTIONS;
  const cap = createConnectionCap(config.name ?? 'rest', maxConnections);
  let openConnections = 0;
  app.filter((res, change) => {
    openConnections += Number(change);
    if (Number(change) > 0 && openConnections > maxConnections) {
      cap.refuse();
      res.close();
    }
  });

  // Collections of plan summaries (search, compare) are written from pre-serialized plan fragments:
  // ~10× faster than either serializer on a 25-plan page (bench/search.bench.ts), same bytes.
  const serializerFor = (op: Operation<never>): Route['serializer'] =>
    '_embedded' in ((op.responseSchema.properties ?? {}) as object) ? fragmentSerializer((b) => JSON.stringify(b)) : compileSerializer(op.responseSchema);
  const routes: Route[] = OPERATIONS.map((op) => ({
    pattern: op.path.replace(/\{(\w+)\}/g, ':$1'),
    op,
    serializer: serializerFor(op),
    cached: op.cacheable === true,
    template: op.path,
    metricId: RequestMetrics.routeId('rest', op.path),
  }));
  // The overview table's `/zip/{zip}` spelling serves the same body (api-contract §5.7).
  const zipRoute = routes.find((r) => r.op.id === 'lookupZip');
  if (zipRoute !== undefined) routes.push({ ...zipRoute, pattern: '/v1/health/zip/:zip', template: '/v1/health/zip/{zip}', metricId: RequestMetrics.routeId('rest', '/v1/health/zip/{zip}') });

  const metrics = config.metrics;
  const accessLog = config.accessLog;
  /** Counts one answered request (and logs it when sampled); `t0` is performance.now() at routing. */
  const observe = (metricId: number, template: string, status: number, t0: number, requestId: string, method: string, path: string): void => {
    const seconds = (performance.now() - t0) / 1000;
    metrics?.request(metricId, status, seconds);
    if (accessLog?.sampled() === true) accessLog.write({ requestId, method, route: template, path, status, seconds });
  };
  /** The metric id and label of a non-operation pattern (`/healthz`, `/problems/:slug`, `/*`). */
  const labelOf = (pattern: string): { readonly id: number; readonly template: string } => {
    const template = pattern === '/*' ? OTHER_ROUTE : pattern.replace(/:(\w+)/g, '{$1}');
    return { id: RequestMetrics.routeId('rest', template), template };
  };

  const problemReply = (spec: ProblemSpec, instance: string, extra: Array<[string, string]> = []): Reply => ({
    status: PROBLEM_TYPES[spec.kind].status,
    headers: [['content-type', PROBLEM_TYPE], ...extra],
    body: serializeProblem(toProblemBody(spec, config.baseUrl, instance, config.upgradeUrl) as unknown as Record<string, unknown>),
  });

  /** Inside a cork: the status line and the headers every response carries. */
  const writeHead = (res: HttpResponse, status: string | Buffer, requestId: string): void => {
    res.writeStatus(status);
    res.writeHeader(B.requestId, requestId);
    res.writeHeader(B.allowOrigin, B.any);
    res.writeHeader(B.exposeHeaders, B.exposed);
  };

  /** Inside a cork, after the headers: the body, or none for a 304 and for HEAD (its length instead). */
  const writeBody = (res: HttpResponse, status: number, head: boolean, body: string | Buffer, close = draining): void => {
    // endWithoutBody takes no arguments here: an undefined length reaches the native side as 2^63.
    if (status === 304) {
      res.endWithoutBody();
    } else if (head) {
      res.writeHeader('content-length', String(Buffer.byteLength(body)));
      res.endWithoutBody();
    } else {
      endWithBody(res, toBytes(body), close);
    }
  };

  const write = (res: HttpResponse, reply: Reply, head: boolean, requestId: string, close = draining): void => {
    res.cork(() => {
      writeHead(res, STATUS_LINE[reply.status] ?? `${reply.status} Unknown`, requestId);
      for (const [k, v] of reply.headers) res.writeHeader(k, v);
      writeBody(res, reply.status, head, reply.body, close);
    });
  };

  const writeOk = (res: HttpResponse, ok: OkReply, head: boolean, requestId: string): void => {
    const r = ok.response;
    res.cork(() => {
      writeHead(res, ok.notModified ? B.notModified : B.ok, requestId);
      if (!ok.notModified) res.writeHeader(B.contentType, B.json);
      res.writeHeader(B.etag, r.etagValue);
      res.writeHeader(B.cacheControl, B.cache);
      res.writeHeader(B.vary, B.authorization);
      forEachRateLimitHeader(ok.quota, (k, v) => res.writeHeader(k, v));
      res.writeHeader(B.link, r.linkValue);
      writeBody(res, ok.notModified ? 304 : 200, head, r.body);
    });
  };

  const handle = (route: Route, res: HttpResponse, req: HttpRequest, head: boolean): void => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const authorization = req.getHeader('authorization');
    const accept = req.getHeader('accept');
    const ifNoneMatch = req.getHeader('if-none-match');
    if (hasBody(req)) {
      // Checked before authentication and quota: uWS runs the handler before it rejects a malformed
      // Content-Length, so this is what keeps such a request from being charged. The connection is
      // closed because the body's framing cannot be trusted.
      write(res, problemReply(BODY_NOT_ALLOWED, path), head, requestId, true);
      observe(route.metricId, route.template, 400, t0, requestId, head ? 'HEAD' : 'GET', path);
      return;
    }
    const pathParams: Record<string, string> = {};
    route.op.pathParams.forEach((name, i) => {
      pathParams[name] = decodePathParam(req.getParameter(i) ?? '');
    });
    const internal = (err: unknown): Reply => {
      onError(err, requestId);
      return problemReply({ kind: 'internal', detail: 'An unexpected error occurred. Quote the X-Request-Id when contacting support.' }, path);
    };
    const send = (reply: Reply | OkReply): void => {
      if ('response' in reply) writeOk(res, reply, head, requestId);
      else write(res, reply, head, requestId);
      observe(route.metricId, route.template, 'response' in reply ? (reply.notModified ? 304 : 200) : reply.status, t0, requestId, head ? 'HEAD' : 'GET', path);
    };
    let reply: Reply | OkReply | Promise<Reply | OkReply>;
    try {
      reply = respond(route, path, rawQuery, authorization, accept, ifNoneMatch, pathParams);
    } catch (err) {
      reply = internal(err);
    }
    if (!(reply instanceof Promise)) return send(reply);
    // The quota had to ask Redis (leased-quota.ts): answer later, unless the client left meanwhile
    // (writing to an aborted response would crash uWS).
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    reply.catch(internal).then((r) => {
      if (!aborted) send(r);
    });
  };

  const respond = (
    route: Route,
    path: string,
    rawQuery: string,
    authorization: string,
    accept: string,
    ifNoneMatch: string,
    pathParams: Record<string, string>,
  ): Reply | OkReply | Promise<Reply | OkReply> => {
    if (!acceptsJson(accept)) return problemReply({ kind: 'notAcceptable', detail: 'This resource is available as application/json only.' }, path);
    const now = clock();
    const who = auth.authenticate(authorization, now);
    if (!who.ok) {
      metrics?.authFailed('rest', who.reason);
      if (who.reason === 'unavailable') return problemReply(STATE_UNAVAILABLE, path, [['retry-after', STATE_RETRY_AFTER]]);
      return problemReply(UNAUTHORIZED, path, [['www-authenticate', who.reason === 'missing' ? REALM : INVALID_TOKEN]]);
    }
    const counted = config.quota.consume(who.userId, who.tier);
    const proceed = (decision: QuotaDecision): Reply | OkReply => answer(route, path, rawQuery, ifNoneMatch, pathParams, who.tier, decision);
    return counted instanceof Promise ? counted.then(proceed) : proceed(counted);
  };

  /** A request past authentication and counting: the operation's answer (from the cache when it can). */
  const answer = (route: Route, path: string, rawQuery: string, ifNoneMatch: string, pathParams: Record<string, string>, tier: Tier, decision: QuotaDecision): Reply | OkReply => {
    if (!decision.allowed) {
      metrics?.quotaRefused(tier);
      return problemReply(RATE_LIMITED, path, rateLimitHeaders(decision));
    }
    // A cacheable operation's request always gets the same 200 within a build; only the endpoint's
    // tier depends on the caller, so it is checked before a hit is served. A request text seen before
    // skips validation; any other is validated and then found by its canonical form.
    const spelling = route.cached ? `${route.pattern}\u0000${rawQuery}\u0000${route.op.pathParams.length === 0 ? '' : Object.values(pathParams).join('\u0000')}` : '';
    const hit = route.cached ? cache.bySpelling(spelling) : undefined;
    if (hit !== undefined && TIER_RANK[tier] >= TIER_RANK[route.op.tier]) {
      metrics?.cacheLookup(true);
      return okReply(hit, ifNoneMatch, decision);
    }
    // One snapshot for the whole request (src/operations/live-registry.ts).
    const c = ctx;
    const result = execute(route.op, c, tier, queryPairs(rawQuery), pathParams);
    if (!result.ok) return problemReply(result.problem, path, rateLimitHeaders(decision));
    if (route.cached) {
      const known = cache.get(result.canonical, spelling);
      metrics?.cacheLookup(known !== undefined);
      if (known !== undefined) return okReply(known, ifNoneMatch, decision);
    }
    const etag = etagFor(c.registry.version, result.canonical);
    const link = linkHeader(result.body._links, serviceDesc);
    const body = toBytes(route.serializer(result.body));
    const done: CachedResponse = {
      etag,
      etagValue: route.cached ? Buffer.from(etag, 'latin1') : etag,
      linkValue: route.cached ? Buffer.from(link) : link,
      body,
      bytes: body.byteLength + etag.length + 2 * link.length,
    };
    if (route.cached) cache.set(result.canonical, spelling, done);
    return okReply(done, ifNoneMatch, decision);
  };

  const okReply = (response: CachedResponse, ifNoneMatch: string, quota: QuotaDecision): OkReply => ({ response, quota, notModified: ifNoneMatchMatches(ifNoneMatch, response.etag) });

  const methodNotAllowed = (label: { readonly id: number; readonly template: string }) => (res: HttpResponse, req: HttpRequest): void => {
    const t0 = performance.now();
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    write(res, problemReply({ kind: 'methodNotAllowed', detail: `Method ${method} is not allowed. Allowed: GET, HEAD.` }, path, [['allow', 'GET, HEAD']]), false, requestId);
    observe(label.id, label.template, 405, t0, requestId, method, path);
  };

  const preflight = (res: HttpResponse, req: HttpRequest, label: { readonly id: number; readonly template: string }): void => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const path = req.getUrl();
    res.cork(() => {
      res.writeStatus('204 No Content');
      res.writeHeader('x-request-id', requestId);
      res.writeHeader('access-control-allow-origin', '*');
      res.writeHeader('access-control-allow-methods', 'GET, HEAD, OPTIONS');
      res.writeHeader('access-control-allow-headers', 'Authorization, Accept, If-None-Match, Content-Type, X-Request-Id');
      res.writeHeader('access-control-expose-headers', EXPOSED);
      res.writeHeader('access-control-max-age', '86400');
      res.endWithoutBody();
    });
    observe(label.id, label.template, 204, t0, requestId, 'OPTIONS', path);
  };

  /**
   * Registers a handler with the abort handler attached first: uWS terminates the process when a
   * handler returns with its response pending and none attached (response-writer.ts).
   */
  function on(method: 'get' | 'head' | 'options' | 'any', pattern: string, handler: (res: HttpResponse, req: HttpRequest) => void): void {
    app[method](pattern, (res, req) => {
      res.onAborted(ignoreAbort);
      handler(res, req);
    });
  }

  for (const route of routes) {
    on('get', route.pattern, (res, req) => handle(route, res, req, false));
    on('head', route.pattern, (res, req) => handle(route, res, req, true));
    on('options', route.pattern, (res, req) => preflight(res, req, { id: route.metricId, template: route.template }));
    on('any', route.pattern, methodNotAllowed({ id: route.metricId, template: route.template }));
  }

  // Unauthenticated documents: no quota, no key.
  const plain = (pattern: string, status: () => number, contentType: string, body: () => string | Buffer): void => {
    const label = labelOf(pattern);
    const h = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const s = status();
      const requestId = requestIdFrom(req.getHeader('x-request-id'));
      write(res, { status: s, headers: [['content-type', contentType], ['cache-control', 'no-cache']], body: body() }, head, requestId);
      observe(label.id, label.template, s, t0, requestId, head ? 'HEAD' : 'GET', req.getUrl());
    };
    on('get', pattern, h(false));
    on('head', pattern, h(true));
    on('options', pattern, (res, req) => preflight(res, req, label));
    on('any', pattern, methodNotAllowed(label));
  };
  plain('/v1/openapi.json', () => 200, JSON_TYPE, () => (openapiBody ??= openapiFor(ctx)));
  // The index, docs and plans pages (docs-pages.ts); the plans page shows the quota's limits as configured.
  for (const page of pages({ baseUrl: config.baseUrl, operations: OPERATIONS, dailyLimit: (tier) => config.quota.limits[tier] })) {
    const headers: Array<[string, string]> = [['content-type', page.contentType], ['cache-control', page.cacheControl], ['x-content-type-options', 'nosniff']];
    if (page.csp !== undefined) headers.push(['content-security-policy', page.csp]);
    const label = labelOf(page.pattern);
    const h = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const requestId = requestIdFrom(req.getHeader('x-request-id'));
      write(res, { status: 200, headers, body: page.body() }, head, requestId);
      observe(label.id, label.template, 200, t0, requestId, head ? 'HEAD' : 'GET', req.getUrl());
    };
    on('get', page.pattern, h(false));
    on('head', page.pattern, h(true));
    on('any', page.pattern, methodNotAllowed(label));
  }
  plain('/healthz', () => 200, JSON_TYPE, () => healthBody);
  // 'degraded' (Redis lost, known keys still served) stays ready: taking every instance out of a load
  // balancer would turn an outage of Redis into a total one (observability/health-probes.ts).
  // plain() asks for the status, then the body, in one synchronous turn: both come from one answer.
  let readyz: ReturnType<typeof readyzAnswer> | undefined;
  plain(
    '/readyz',
    () => (readyz = readyzAnswer(readinessOf(draining, config.store), ctx.registry)).status,
    JSON_TYPE,
    () => readyz!.body,
  );
  const problemLabel = labelOf('/problems/:slug');
  const problemPage = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const slug = req.getParameter(0) ?? '';
    const t = Object.values(PROBLEM_TYPES).find((x) => x.slug === slug);
    const path = req.getUrl();
    if (t === undefined) {
      write(res, problemReply({ kind: 'notFound', detail: `No route matches ${path}.` }, path), head, requestId);
      observe(problemLabel.id, problemLabel.template, 404, t0, requestId, head ? 'HEAD' : 'GET', path);
      return;
    }
    const html = `<!doctype html><meta charset="utf-8"><title>${t.title}</title><h1>${t.status} ${t.title}</h1><p>Problem type <code>${slug}</code> of the Health Plan Data Service. The response body's <code>detail</code> says what happened; see ${serviceDesc}.</p>`;
    write(res, { status: 200, headers: [['content-type', 'text/html; charset=utf-8']], body: html }, head, requestId);
    observe(problemLabel.id, problemLabel.template, 200, t0, requestId, head ? 'HEAD' : 'GET', path);
  };
  on('get', '/problems/:slug', problemPage(false));
  on('head', '/problems/:slug', problemPage(true));
  on('any', '/problems/:slug', methodNotAllowed(problemLabel));
  const otherLabel = labelOf('/*');
  on('any', '/*', (res, req) => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const path = req.getUrl();
    write(res, problemReply({ kind: 'notFound', detail: `No route matches ${path}.` }, path), req.getMethod() === 'head', requestId);
    observe(otherLabel.id, otherLabel.template, 404, t0, requestId, req.getCaseSensitiveMethod(), path);
  });

  return {
    appDescriptor() {
      return (app as unknown as { getDescriptor(): unknown }).getDescriptor();
    },
    listen(port, host = '127.0.0.1') {
      return listenExclusive(app, 'rest', host, port).then((token) => {
        listenSocket = token;
        return uws.us_socket_local_port(token);
      });
    },
    responseCacheStats() {
      return { entries: cache.size, bytes: cache.bytes };
    },
    drain() {
      draining = true;
    },
    async close() {
      draining = true;
      if (listenSocket !== null) {
        uws.us_listen_socket_close(listenSocket);
        listenSocket = null;
      }
      // Handlers are synchronous: once the listen socket is closed, what can still be in flight is the
      // rest of a large body to a slow reader, which had the drain period (services.ts) to finish.
      // Give keep-alive clients one turn, then close everything.
      await new Promise<void>((resolve) => setImmediate(resolve));
      app.close();
    },
  };
}
