/**
 * @module The /metrics listener: a `node:http` server of its own (HPD_METRICS_PORT), so the figures can
 * stay on a private interface while the API listens publicly. Only GET and HEAD /metrics exist.
 */
import type { AddressInfo } from 'node:net';
import { toListenError } from './listen-error.ts';
import { createNodeListener, type ListenerLimits } from './node-listener.ts';
import { methodNotAllowed } from '../operations/problems.ts';
import { requestPath } from './request-target.ts';
import type { MetricsExposition } from '../observability/metrics-exposition.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../observability/prometheus-text.ts';

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** The 404 of any other path: this listener has one resource. */
const ONLY_METRICS = 'This listener serves /metrics only.';

/** RFC 9457 with `about:blank`: the status says everything there is to say here. */
function problem(status: number, title: string, detail: string): string {
  return JSON.stringify({ type: 'about:blank', title, status, detail });
}

/**
 * `limits` are the same as the other node:http listeners': a scraper needs one connection, and one
 * address holding many must not keep the others' scrapes out when the port is exposed.
 */
export async function startMetricsServer(
  exposition: MetricsExposition,
  port: number,
  host: string,
  limits?: Partial<ListenerLimits>,
): Promise<MetricsServer> {
  const listener = createNodeListener(
    'metrics',
    (req, res) => {
      const path = requestPath(req.url ?? '/');
      const answer = (status: number, type: string, body: string, headers: Record<string, string> = {}): void => {
        res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (path !== '/metrics') return answer(404, 'application/problem+json', problem(404, 'Not Found', ONLY_METRICS));
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return answer(
          405,
          'application/problem+json',
          problem(405, 'Method Not Allowed', methodNotAllowed(req.method ?? '', 'GET, HEAD').detail),
          { allow: 'GET, HEAD' },
        );
      answer(200, PROMETHEUS_CONTENT_TYPE, exposition.render());
    },
    limits,
  );
  await new Promise<void>((resolve, reject) => {
    listener.server.once('error', (err) => reject(toListenError('metrics', host, port, err)));
    listener.server.listen(port, host, () => resolve());
  });
  return {
    port: (listener.server.address() as AddressInfo).port,
    close: () => listener.close(0),
  };
}
