/**
 * @module The REST front's fixed documents, served without a key or quota: the OpenAPI document, the
 * index/docs/plans pages, the health probes, the problem-type pages and the 404 of everything else.
 */
import { OPERATIONS } from '../operations/index.ts';
import type { Operation, OperationContext } from '../operations/operation.ts';
import { noRoute, PROBLEM_TYPES } from '../operations/problems.ts';
import { HEALTH_BODY, readinessOf, readyzAnswer } from '../observability/health-probes.ts';
import { pages } from './docs-pages.ts';
import { buildOpenApi } from './openapi.ts';
import { collectExamples } from './openapi-examples.ts';
import { requestIdFrom } from './request-id.ts';
import { RestFront, type ServerConfig } from './rest-front.ts';
import type { Route } from './rest-pipeline.ts';
import { JSON_TYPE } from './rest-writers.ts';
import { chooseCoding, compressVariants, type Variants } from './compression.ts';
import type { HttpRequest, HttpResponse } from './uws.ts';

/** The OpenAPI document of a snapshot; its examples run each operation once (openapi-examples.ts). */
function openApiDocument(config: ServerConfig, routes: readonly Route[], c: OperationContext): Buffer {
  const serialize = (op: Operation<never>, body: Record<string, unknown>): string | Buffer =>
    routes.find((r) => r.op === op)!.serializer(body);
  const examples = collectExamples({ operations: OPERATIONS, ctx: c, upgradeUrl: config.upgradeUrl, serialize });
  return Buffer.from(JSON.stringify(buildOpenApi(OPERATIONS, { baseUrl: config.baseUrl, build: c.registry.version, examples })));
}

/** A document answered with `status()` and `body()` (asked in that order, in one synchronous turn). */
function plain(front: RestFront, pattern: string, status: () => number, contentType: string, body: () => string | Buffer): void {
  const label = RestFront.labelOf(pattern);
  front.route(pattern, label, (res, req, head) => {
    const t0 = performance.now();
    const s = status();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    front.write(
      res,
      {
        status: s,
        headers: [
          ['content-type', contentType],
          ['cache-control', 'no-cache'],
        ],
        body: body(),
      },
      head,
      requestId,
    );
    front.observe(label, s, t0, requestId, head ? 'HEAD' : 'GET', req.getUrl());
  });
}

/** The index, docs and plans pages (docs-pages.ts); the plans page shows the quota's limits as configured. */
function registerPages(front: RestFront, config: ServerConfig): void {
  for (const page of pages({ baseUrl: config.baseUrl, operations: OPERATIONS, dailyLimit: (tier) => config.quota.limits[tier] })) {
    const headers: Array<[string, string]> = [
      ['content-type', page.contentType],
      ['cache-control', page.cacheControl],
      ['x-content-type-options', 'nosniff'],
    ];
    if (page.csp !== undefined) headers.push(['content-security-policy', page.csp]);
    const label = RestFront.labelOf(page.pattern);
    const handler = (res: HttpResponse, req: HttpRequest, head: boolean): void => {
      const t0 = performance.now();
      const requestId = requestIdFrom(req.getHeader('x-request-id'));
      front.write(res, { status: 200, headers, body: page.body() }, head, requestId);
      front.observe(label, 200, t0, requestId, head ? 'HEAD' : 'GET', req.getUrl());
    };
    front.route(page.pattern, label, handler, false);
  }
}

/** `/problems/{slug}`: a short HTML page per problem type, 404 for an unknown slug. */
function registerProblemPages(front: RestFront): void {
  const label = RestFront.labelOf('/problems/:slug');
  const handler = (res: HttpResponse, req: HttpRequest, head: boolean): void => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const slug = req.getParameter(0) ?? '';
    const t = Object.values(PROBLEM_TYPES).find((x) => x.slug === slug);
    const path = req.getUrl();
    const method = head ? 'HEAD' : 'GET';
    if (t === undefined) {
      front.write(res, front.problemReply(noRoute(path), path), head, requestId);
      front.observe(label, 404, t0, requestId, method, path);
      return;
    }
    const html = `<!doctype html><meta charset="utf-8"><title>${t.title}</title><h1>${t.status} ${t.title}</h1><p>Problem type <code>${slug}</code> of the Health Plan Data Service. The response body's <code>detail</code> says what happened; see ${front.serviceDesc}.</p>`;
    front.write(res, { status: 200, headers: [['content-type', 'text/html; charset=utf-8']], body: html }, head, requestId);
    front.observe(label, 200, t0, requestId, method, path);
  };
  front.route('/problems/:slug', label, handler, false);
}

/**
 * `/v1/openapi.json`, identity or compressed (brotli q6 / gzip 9, once per build: compression.ts),
 * with `Vary: Accept-Encoding`.
 */
function registerOpenApi(front: RestFront, document: () => { readonly body: Buffer; readonly variants: Variants }): void {
  const label = RestFront.labelOf('/v1/openapi.json');
  front.route('/v1/openapi.json', label, (res, req, head) => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const doc = document();
    const coding = chooseCoding(req.getHeader('accept-encoding'), doc.variants);
    const headers: Array<[string, string]> = [
      ['content-type', JSON_TYPE],
      ['cache-control', 'no-cache'],
    ];
    if (coding !== null) headers.push(['content-encoding', coding]);
    headers.push(['vary', 'Accept-Encoding']);
    front.write(res, { status: 200, headers, body: coding === null ? doc.body : doc.variants[coding]! }, head, requestId);
    front.observe(label, 200, t0, requestId, head ? 'HEAD' : 'GET', req.getUrl());
  });
}

/**
 * Registers every fixed document. Returns what must be forgotten when a new build is served (the
 * OpenAPI document is encoded once per build, when first asked for: a string body would be converted
 * to a fresh buffer on every request).
 */
export function registerDocuments(front: RestFront, config: ServerConfig, routes: readonly Route[]): { readonly onSwap: () => void } {
  let openapi: { readonly body: Buffer; readonly variants: Variants } | null = null;
  registerOpenApi(front, () => {
    if (openapi === null) {
      const body = openApiDocument(config, routes, front.ctx);
      openapi = { body, variants: compressVariants(body, true) };
    }
    return openapi;
  });
  registerPages(front, config);
  const healthBody = Buffer.from(HEALTH_BODY);
  plain(
    front,
    '/healthz',
    () => 200,
    JSON_TYPE,
    () => healthBody,
  );
  // 'degraded' (Redis lost, known keys still served) stays ready: taking every instance out of a load
  // balancer would turn an outage of Redis into a total one (observability/health-probes.ts).
  let readyz = readyzAnswer(readinessOf(front.draining, config.store), front.ctx.registry);
  const readyStatus = (): number => {
    readyz = readyzAnswer(readinessOf(front.draining, config.store), front.ctx.registry);
    return readyz.status;
  };
  plain(front, '/readyz', readyStatus, JSON_TYPE, () => readyz.body);
  registerProblemPages(front);
  const otherLabel = RestFront.labelOf('/*');
  front.on('any', '/*', (res, req) => {
    const t0 = performance.now();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    const path = req.getUrl();
    front.write(res, front.problemReply(noRoute(path), path), req.getMethod() === 'head', requestId);
    front.observe(otherLabel, 404, t0, requestId, req.getCaseSensitiveMethod(), path);
  });
  return {
    onSwap: () => {
      openapi = null;
    },
  };
}
