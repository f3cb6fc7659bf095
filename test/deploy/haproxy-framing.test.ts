/**
 * The framing table of test/adversarial/framing.test.ts through deploy/haproxy.cfg, as Debian's HAProxy
 * 2.6 runs it in front of `hpd serve`: HAProxy parses every request before an instance sees it, and
 * either refuses it with its own page, or forwards it framed one way (normalised), which hpd then
 * reads the same way. What each case gets on each frontend is pinned as measured, so a change of
 * HAProxy or of the file that lets a request through differently fails here, and the instance must
 * still be serving afterwards.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { FRAMING_CASES } from '../helpers/framing-cases.ts';
import { startHaproxy, type TestHaproxy } from '../helpers/haproxy.ts';
import { rawExchange, type RawResponse } from '../helpers/raw-exchange.ts';
import { prepareServe, spawnServe, type ServeChild, type ServeFixture } from '../helpers/serve-fixture.ts';

/**
 * Per case: REST, MCP, authorization server. `lb` is HAProxy's own page and a closed connection;
 * otherwise the statuses of the responses, in order, from hpd (a request behind served through
 * another connection to the instance: HAProxy and hpd agree on where the first one ended).
 */
const EXPECTED: Readonly<Record<string, readonly [string, string, string]>> = {
  'two Content-Length fields that differ': ['lb 400', 'lb 400', 'lb 400'],
  'two equal Content-Length fields': ['405 200', '401 200', '404 200'],
  'a Content-Length list': ['405 200', '401 200', '404 200'],
  'Transfer-Encoding chunked then identity (two fields)': ['lb 400', 'lb 400', 'lb 400'],
  'Transfer-Encoding chunked twice (two fields)': ['lb 400', 'lb 400', 'lb 400'],
  'Transfer-Encoding: chunked, identity': ['lb 400', 'lb 400', 'lb 400'],
  'Transfer-Encoding: identity': ['lb 400', 'lb 400', 'lb 400'],
  'Transfer-Encoding: gzip, chunked': ['lb 422', 'lb 422', 'lb 422'],
  'Transfer-Encoding: xchunked': ['lb 400', 'lb 400', 'lb 400'],
  // HAProxy drops the Content-Length, forwards the chunked body and closes the client's connection.
  'Transfer-Encoding with Content-Length': ['405', '401', '404'],
  'a bare CR inside a header value': ['lb 400', 'lb 400', 'lb 400'],
  'a bare LF inside a header value': ['lb 400', 'lb 400', 'lb 400'],
  'a header line ended by a bare LF': ['401 200', '401 200', '200 200'],
  'GET with Content-Length: 5': ['400 200', '400 200', '400 200'],
  'GET with Transfer-Encoding: chunked': ['400 200', '400 200', '400 200'],
  'GET with Content-Length: 0 twice, then 5': ['lb 400', 'lb 400', 'lb 400'],
  'HEAD with Content-Length: 5': ['400 200', '400 200', '400 200'],
  'HEAD with Transfer-Encoding: chunked': ['400 200', '400 200', '400 200'],
  'two Host fields': ['lb 400', 'lb 400', 'lb 400'],
};

let fixture: ServeFixture;
let served: ServeChild;
let lb: TestHaproxy;

before(async () => {
  fixture = await prepareServe(
    'hpd-lb-framing-',
    { tier: 'enterprise', userId: 'user-lb-framing' },
    {
      HPD_WORKERS: '0',
      HPD_DRAIN_SECONDS: '1',
      HPD_TRUSTED_PROXIES: '127.0.0.1',
    },
  );
  const instance = { host: '127.0.0.1', restPort: fixture.restPort, mcpPort: fixture.mcpPort, authPort: fixture.authPort };
  // The file names two instances: the same one twice.
  lb = await startHaproxy([instance, instance]);
  served = await spawnServe(fixture.env);
  for (let i = 0; i < 100 && !(await lb.stats()).every((s) => s.status === 'UP'); i++) await sleep(100);
});
after(async () => {
  if (served !== undefined && served.child.exitCode === null) {
    served.child.kill('SIGKILL');
    await served.exited;
  }
  await lb?.stop();
  if (fixture !== undefined) rmSync(fixture.dir, { recursive: true, force: true });
});

const isLbPage = (r: RawResponse): boolean => r.body.includes('<html>') && !r.headers.some(([k]) => k === 'x-request-id');

test('through HAProxy every framing case is refused by HAProxy or framed by it the way hpd reads it, as pinned; the instance keeps serving', async () => {
  // The request behind asks HAProxy to close once it is answered, so no exchange waits out a keep-alive.
  const frontends = [
    {
      port: lb.ports.rest,
      path: '/v1/health/years',
      probe: `GET /v1/health/years HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture.key}\r\nConnection: close\r\n\r\n`,
    },
    { port: lb.ports.mcp, path: '/mcp', probe: 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' },
    { port: lb.ports.auth, path: '/healthz', probe: 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' },
  ];
  const mismatches: string[] = [];
  for (const c of FRAMING_CASES) {
    const expected = EXPECTED[c.name];
    assert.ok(expected !== undefined, `no expectation for ${c.name}`);
    for (const [i, f] of frontends.entries()) {
      const r = await rawExchange(f.port, c.request(f.path) + f.probe, 5000, c.head === true);
      const got =
        r.responses.length === 1 && isLbPage(r.responses[0]!) ? `lb ${r.responses[0]!.status}` : r.responses.map((x) => x.status).join(' ');
      if (got !== expected[i]) mismatches.push(`${c.name} on port ${f.port}: expected ${expected[i]}, got ${got || 'nothing'}`);
      if (got.startsWith('lb') && !r.closed) mismatches.push(`${c.name} on port ${f.port}: HAProxy's refusal left the connection open`);
    }
  }
  assert.deepEqual(mismatches, []);
  assert.equal(served.child.exitCode, null, served.stderr());
  const health = await fetch(`${lb.restUrl}/healthz`);
  assert.equal(health.status, 200);
});

test('through HAProxy, HTTP/1.0 and absolute-form targets reach REST as sent and get uWS 505s, which HAProxy counts as server errors; MCP and the authorization server serve them; a CONNECT gets 405 from both and the instance keeps serving', async () => {
  const statuses = (port: number, text: string) => rawExchange(port, text, 2000).then((r) => r.responses.map((x) => x.status).join(' '));
  const rest5xx = async (): Promise<number> =>
    (await lb.stats()).filter((s) => s.backend === 'be_rest').reduce((n, s) => n + s.responses5xx, 0);
  const counted = await rest5xx();
  const rest = lb.ports.rest;
  assert.equal(await statuses(rest, 'GET /v1/health/years HTTP/1.0\r\nHost: x\r\n\r\n'), '505');
  assert.equal(await statuses(rest, 'GET http://x/v1/health/years HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), '505');
  const after5xx = await rest5xx();
  assert.ok(after5xx >= counted + 2, `be_rest counted ${after5xx} 5xx`);
  for (const port of [lb.ports.mcp, lb.ports.auth]) {
    assert.equal(await statuses(port, 'GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n'), '200');
    assert.equal(await statuses(port, 'GET http://x/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), '200');
    assert.equal(await statuses(port, 'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n'), '405');
  }
  await sleep(300);
  assert.equal(served.child.exitCode, null, served.stderr());
  const health = await fetch(`${lb.mcpUrl.replace('/mcp', '')}/healthz`);
  assert.equal(health.status, 200);
});
