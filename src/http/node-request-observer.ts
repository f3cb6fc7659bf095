/**
 * @module Counting the requests of a `node:http` listener (MCP, authorization server) in /metrics and
 * the access log: called first for each request, it records the status and duration when the response
 * closes, whichever code path answered it. An MCP GET stream counts when it ends.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPath } from './request-target.ts';
import type { AccessLog } from '../observability/access-log.ts';
import { OTHER_ROUTE, RequestMetrics, ROUTES, type Front } from '../observability/request-metrics.ts';

export type NodeRequestObserver = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * @param routeOf maps a request path to one of the front's route labels (ROUTES[front]); any other
 *   answer is counted as "other"
 */
export function createNodeRequestObserver(
  front: Front,
  routeOf: (path: string) => string,
  metrics: RequestMetrics | undefined,
  accessLog: AccessLog | undefined,
): NodeRequestObserver | undefined {
  if (metrics === undefined && accessLog === undefined) return undefined;
  const known = new Set(ROUTES[front]);
  return (req, res) => {
    const t0 = performance.now();
    const path = requestPath(req.url ?? '/') ?? '/';
    const route = known.has(routeOf(path)) ? routeOf(path) : OTHER_ROUTE;
    res.once('close', () => {
      const seconds = (performance.now() - t0) / 1000;
      metrics?.request(RequestMetrics.routeId(front, route), res.statusCode, seconds);
      if (accessLog?.sampled() === true) {
        const id = res.getHeader('x-request-id');
        accessLog.write({
          requestId: typeof id === 'string' ? id : randomUUID(),
          method: req.method ?? 'GET',
          route,
          path,
          status: res.statusCode,
          seconds,
        });
      }
    });
  };
}
