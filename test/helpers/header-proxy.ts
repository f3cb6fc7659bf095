/**
 * @module A transparent HTTP proxy on port 0 that adds request headers, for third-party clients that
 * cannot send them (the MCP conformance suite has no option for an Authorization header).
 *
 * Bodies stream both ways unbuffered, so SSE responses arrive event by event. Host and Origin naming the
 * proxy are rewritten to name the upstream, exactly as if the client had connected there; any other
 * Host or Origin (a DNS-rebinding probe's) passes through untouched, so the upstream judges it.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeaderProxy {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  close(): Promise<void>;
}

export async function startHeaderProxy(upstream: URL, add: Readonly<Record<string, string>>): Promise<HeaderProxy> {
  let self = '';
  const retarget = (value: string | undefined, prefix: string): string | undefined =>
    value === `${prefix}${self}` ? `${prefix}${upstream.host}` : value;
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, ...add };
    headers.host = retarget(req.headers.host, '');
    if (req.headers.origin !== undefined) headers.origin = retarget(req.headers.origin, 'http://');
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin: `http://${self}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
