/**
 * What deploy/haproxy.cfg replays when a server closes the connection without answering (an instance
 * killed with requests in flight): GET and HEAD are sent again, to the other server (retries 2,
 * redispatch); OAuth and MCP POSTs never are, because the server may have acted on them. The servers
 * here are raw TCP listeners that read HAProxy's PROXY header, pass its /readyz check and close every
 * other request's connection without a byte of answer, so each arrival is counted exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseProxyHeader } from '../../src/http/proxy-protocol.ts';
import { startHaproxy } from '../helpers/haproxy.ts';

/** A server that answers /readyz and drops everything else unanswered; `seen` lists what was dropped. */
async function droppingServer(seen: string[]): Promise<{ server: Server; port: number }> {
  const server = createServer((socket: Socket) => {
    let buffered = Buffer.alloc(0);
    // HAProxy opens each connection with a PROXY protocol v2 header (send-proxy-v2), as hpd expects it.
    let headerRead = false;
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      if (!headerRead) {
        const header = parseProxyHeader(buffered);
        if (header.kind === 'incomplete') return;
        if (header.kind === 'invalid') {
          seen.push(`malformed PROXY header: ${header.reason}`);
          socket.destroy();
          return;
        }
        if (header.kind !== 'absent') buffered = buffered.subarray(header.length);
        headerRead = true;
      }
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.subarray(end + 4 + length);
        const [method, path] = head.split(' ', 2) as [string, string];
        if (path === '/readyz') {
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{"status":"ok"}');
          continue;
        }
        seen.push(`${method} ${path}`);
        socket.end();
        return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port };
}

test('a server closing without an answer: HAProxy sends a GET or HEAD three times (once more to each server) and an OAuth or MCP POST once', {
  timeout: 60_000,
}, async (t) => {
  const seen: string[] = [];
  const [a, b] = [await droppingServer(seen), await droppingServer(seen)];
  t.after(() => {
    a.server.close();
    b.server.close();
  });
  const lb = await startHaproxy([a, b].map(({ port }) => ({ host: '127.0.0.1', restPort: port, mcpPort: port, authPort: port })));
  t.after(() => lb.stop());
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    const up = (await lb.stats()).filter((s) => s.backend === 'be_rest' && s.status.startsWith('UP')).length;
    if (up === 2) break;
    assert.ok(Date.now() < deadline, 'both servers UP in HAProxy');
  }

  const cases = [
    ['GET', `${lb.restUrl}/v1/health/years`, undefined, 3],
    ['HEAD', `${lb.restUrl}/v1/health/years`, undefined, 3],
    ['GET', `${lb.authUrl}/.well-known/openid-configuration`, undefined, 3],
    ['POST', `${lb.authUrl}/token`, 'grant_type=client_credentials', 1],
    ['POST', lb.mcpUrl, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 1],
  ] as const;
  for (const [method, url, body, attempts] of cases) {
    seen.length = 0;
    const r = await fetch(url, {
      method,
      body,
      headers: body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await r.arrayBuffer();
    const path = new URL(url).pathname;
    t.diagnostic(`${method} ${path}: answered ${r.status} after ${seen.length} attempt(s)`);
    assert.equal(r.status, 502, `${method} ${path}: HAProxy answers 502 when no server answers`);
    assert.deepEqual(
      seen,
      Array.from({ length: attempts }, () => `${method} ${path}`),
      `${method} ${path}`,
    );
  }
});
