/**
 * @module What every route of the REST front shares: the snapshot being served, draining, problem
 * replies, counting, and the registration of handlers (src/http/server.ts assembles the front).
 */
import type { OperationContext } from '../operations/operation.ts';
import { methodNotAllowed, toProblemBody, PROBLEM_TYPES, type ProblemSpec } from '../operations/problems.ts';
import type { DataRegistry } from '../operations/data-registry.ts';
import type { LiveRegistry } from '../operations/live-registry.ts';
import type { Quota } from '../policy/quota.ts';
import type { StateStore } from '../policy/state-store.ts';
import type { AccessLog } from '../observability/access-log.ts';
import { OTHER_ROUTE, RequestMetrics } from '../observability/request-metrics.ts';
import { generatedRequestId, requestIdFrom } from './request-id.ts';
import { ignoreAbort } from './response-writer.ts';
import { BODY_NOT_ALLOWED, framingProblem } from './front-problems.ts';
import { framingFault } from './request-framing.ts';
import { PROBLEM_TYPE, writeHeadReplyAndCloseLater, writePreflight, writeReply, writeReplyAndClose, type Reply } from './rest-writers.ts';
import { serializeProblem } from './serializers.ts';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.ts';

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
  /** Byte budget of the search cache (plan search pages by request text); 0 turns it off. */
  readonly searchCacheBytes?: number;
  /** Concurrent connections; further ones are closed as soon as they open. Default 10,000. */
  readonly maxConnections?: number;
  /** Connections one remote address may hold (src/http/address-cap.ts); 0 turns the limit off. Default 1,000. */
  readonly maxConnectionsPerAddress?: number;
  /**
   * HPD_TRUSTED_PROXIES: peers whose PROXY protocol v2 header (parsed by uWS) names the client, whom the
   * per-address limit then counts instead of the peer.
   */
  readonly trustedProxies?: readonly string[];
  /** The port connections arrive on, when another thread listens for this server (REST workers); 0 until known. */
  readonly listeningPort?: () => number;
  /** Threads serving the same listener (REST workers), which share the per-address limit; default 1. */
  readonly threads?: number;
  /** Names this server in log lines ('rest', or 'rest worker N'). */
  readonly name?: string;
  /** This thread's request counters (/metrics); absent: nothing is counted. */
  readonly metrics?: RequestMetrics;
  /** Absent: no access log. */
  readonly accessLog?: AccessLog;
}

/** A route's label in /metrics and the access log (never the raw path: bounded labels). */
export interface Label {
  readonly id: number;
  readonly template: string;
}

type Handler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * The framing fields' names as bytes: uWS converts a string key to UTF-8 on every lookup, and these
 * two are looked up on every request (bench/framing-check.bench.ts measures both, and forEach).
 */
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CONTENT_LENGTH = Buffer.from('content-length');

export class RestFront {
  /** The context of the snapshot being served, made once per snapshot. */
  ctx: OperationContext;
  draining = false;
  readonly serviceDesc: string;
  readonly onError: (err: unknown, requestId: string) => void;
  /**
   * Asked before every handler; true: it answered the request itself (a trusted proxy's client past
   * its connection limit, server.ts).
   */
  gate: ((res: HttpResponse, req: HttpRequest) => boolean) | null = null;
  readonly #config: ServerConfig;
  readonly #app: TemplatedApp;

  constructor(config: ServerConfig, app: TemplatedApp, registry: DataRegistry) {
    this.#config = config;
    this.#app = app;
    this.ctx = { registry, baseUrl: config.baseUrl };
    this.serviceDesc = `${config.baseUrl}/v1/openapi.json`;
    this.onError =
      config.onError ??
      ((err, id) => process.stderr.write(`request ${id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`));
  }

  /**
   * Counts one answered request (and logs it when sampled); `t0` is performance.now() at routing.
   * `requestId` null: the thread's generated id, made a string only for a log line.
   */
  observe(label: Label, status: number, t0: number, requestId: string | null, method: string, path: string): void {
    const seconds = (performance.now() - t0) / 1000;
    this.#config.metrics?.request(label.id, status, seconds);
    const log = this.#config.accessLog;
    if (log?.sampled() === true)
      log.write({ requestId: requestId ?? generatedRequestId(), method, route: label.template, path, status, seconds });
  }

  /** The metric id and label of a non-operation pattern (`/healthz`, `/problems/:slug`, `/*`). */
  static labelOf(pattern: string): Label {
    const template = pattern === '/*' ? OTHER_ROUTE : pattern.replace(/:(\w+)/g, '{$1}');
    return { id: RequestMetrics.routeId('rest', template), template };
  }

  problemReply(spec: ProblemSpec, instance: string, extra: Array<[string, string]> = []): Reply {
    const c = this.#config;
    return {
      status: PROBLEM_TYPES[spec.kind].status,
      headers: [['content-type', PROBLEM_TYPE], ...extra],
      body: serializeProblem(toProblemBody(spec, c.baseUrl, instance, c.upgradeUrl) as unknown as Record<string, unknown>),
    };
  }

  /** Writes a reply; `Connection: close` while draining unless told otherwise. */
  write(res: HttpResponse, reply: Reply, head: boolean, requestId: string, close = this.draining): void {
    writeReply(res, reply, head, requestId, close);
  }

  /**
   * Registers a handler with the abort handler attached first: uWS terminates the process when a
   * handler returns with its response pending and none attached (response-writer.ts).
   */
  on(method: 'get' | 'head' | 'options' | 'any', pattern: string, handler: Handler): void {
    const label = RestFront.labelOf(pattern);
    this.#app[method](pattern, (res, req) => {
      res.onAborted(ignoreAbort);
      // Only a request with a framing field can be refused for its framing (uWS refuses two Host
      // fields itself): most requests pay two header lookups, not a walk over every field.
      if ((req.getHeader(TRANSFER_ENCODING) !== '' || req.getHeader(CONTENT_LENGTH) !== '') && this.#refusedFraming(res, req, label))
        return;
      if (this.gate?.(res, req) === true) return;
      handler(res, req);
    });
  }

  /**
   * Answers a request whose framing leaves its end in doubt (request-framing.ts) with a 400 and closes
   * its connection before any request behind it is read; false when the framing is sound. Runs before
   * any handler, so such a request is never authenticated or charged.
   */
  #refusedFraming(res: HttpResponse, req: HttpRequest, label: Label): boolean {
    const transferEncoding: string[] = [];
    const contentLength: string[] = [];
    let hosts = 0;
    req.forEach((name, value) => {
      if (name === 'transfer-encoding') transferEncoding.push(value);
      else if (name === 'content-length') contentLength.push(value);
      else if (name === 'host') hosts++;
    });
    // getMethod() lowercases the method in uWS's buffer, which getCaseSensitiveMethod() then returns.
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const fault = framingFault({ method, transferEncoding, contentLength, hosts });
    if (fault === null) return false;
    const t0 = performance.now();
    const path = req.getUrl();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const reply = this.problemReply(fault.kind === 'body' ? BODY_NOT_ALLOWED : framingProblem(fault.reason), path);
    if (method === 'HEAD') writeHeadReplyAndCloseLater(res, reply, requestId);
    else writeReplyAndClose(res, reply, requestId);
    this.observe(label, 400, t0, requestId, req.getCaseSensitiveMethod(), path);
    return true;
  }

  /** GET and HEAD through `handle`, OPTIONS as a CORS preflight (unless `preflight` is false), 405 for the rest. */
  route(pattern: string, label: Label, handle: (res: HttpResponse, req: HttpRequest, head: boolean) => void, preflight = true): void {
    this.on('get', pattern, (res, req) => handle(res, req, false));
    this.on('head', pattern, (res, req) => handle(res, req, true));
    if (preflight) this.on('options', pattern, (res, req) => this.preflight(res, req, label));
    this.on('any', pattern, (res, req) => this.methodNotAllowed(res, req, label));
  }

  methodNotAllowed(res: HttpResponse, req: HttpRequest, label: Label): void {
    const t0 = performance.now();
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    this.write(res, this.problemReply(methodNotAllowed(method, 'GET, HEAD'), path, [['allow', 'GET, HEAD']]), false, requestId);
    this.observe(label, 405, t0, requestId, method, path);
  }

  preflight(res: HttpResponse, req: HttpRequest, label: Label): void {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const path = req.getUrl();
    writePreflight(res, requestId);
    this.observe(label, 204, t0, requestId, 'OPTIONS', path);
  }
}
