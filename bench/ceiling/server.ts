/**
 * @module The hardware ceiling: a bare uWebSockets.js app (the same native module our server loads)
 * that answers every benchmarked URL with the exact bytes our server sent for it (status line,
 * headers and body, recorded by the harness), with no work per request beyond one map lookup. What it
 * reaches is the most this machine's loopback, kernel and uWS can deliver for our responses.
 *
 * Usage: node --import ./bin/register-typescript.js bench/ceiling/server.ts RESPONSES_JSON PORT
 * RESPONSES_JSON: `{ "<path>?<query>": { "status": "200 OK", "headers": [[name, value]…], "body": "…" } }`.
 * Prints `{"ready":true,"port":N}` on stdout once listening; SIGTERM closes it.
 */
import { readFileSync } from 'node:fs';
import { uws, type us_listen_socket } from '../../src/http/uws.ts';

export interface RecordedResponse {
  readonly status: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: string;
}

const [file, portText] = process.argv.slice(2);
if (file === undefined || portText === undefined) {
  process.stderr.write('usage: server.ts RESPONSES_JSON PORT\n');
  process.exit(2);
}
const recorded = JSON.parse(readFileSync(file, 'utf8')) as Record<string, RecordedResponse>;
interface Prebuilt {
  readonly status: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}
const responses = new Map<string, Prebuilt>();
for (const [url, r] of Object.entries(recorded))
  responses.set(url, { status: r.status, headers: r.headers, body: Buffer.from(r.body, 'utf8') });
const notFound = Buffer.from('{"status":404}');

const app = uws.App();
app.any('/*', (res, req) => {
  const query = req.getQuery();
  const r = responses.get(query === undefined || query === '' ? req.getUrl() : `${req.getUrl()}?${query}`);
  res.cork(() => {
    if (r === undefined) {
      res.writeStatus('404 Not Found').end(notFound);
      return;
    }
    res.writeStatus(r.status);
    for (const [k, v] of r.headers) res.writeHeader(k, v);
    res.end(r.body);
  });
});
let listenSocket: us_listen_socket | null = null;
app.listen('127.0.0.1', Number(portText), (token) => {
  if (token === false) {
    process.stderr.write(`ceiling: cannot listen on ${portText}\n`);
    process.exit(1);
  }
  listenSocket = token;
  process.stdout.write(`${JSON.stringify({ ready: true, port: uws.us_socket_local_port(token) })}\n`);
});
process.once('SIGTERM', () => {
  if (listenSocket !== null) uws.us_listen_socket_close(listenSocket);
  app.close();
  process.exit(0);
});
