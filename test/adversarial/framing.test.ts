/**
 * Request framing on every listener (RFC 9112 §6.3): a request whose end is in doubt — repeated or
 * malformed Content-Length, a Transfer-Encoding other than a single chunked, both, a bare CR or LF in
 * a header, a body on GET or HEAD, two Host fields — is answered with one 400 and its connection is
 * closed, and a valid request written right behind it, in the same write, is never answered (it would
 * be the smuggled one). The table (test/helpers/framing-cases.ts) runs against REST on the main thread
 * and in a worker thread, MCP, the authorization server and /metrics, all of one `hpd serve` as
 * startServices assembles it.
 *
 * What uWebSockets.js decides before any of our code runs is pinned here as measured (its own HTML 400
 * and 505, and the connection left idle by a bare CR), so an upgrade that changes it fails a test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKey } from '../../src/policy/api-keys.ts';
import { UWS_PACKAGE, uwsVersion } from '../../src/http/uws.ts';
import { FRAMING_CASES, type FramingCase } from '../helpers/framing-cases.ts';
import { BASE } from '../helpers/http-assert.ts';
import { rawExchange, type RawExchange } from '../helpers/raw-exchange.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';

/** The uWS build whose own answers were measured; another one must be measured and pinned anew. */
const MEASURED_UWS = 'uws-legacy 20.51.4';
const LOADED_UWS = `${UWS_PACKAGE} ${uwsVersion()}`;
const UWS_400 = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>';
const UWS_505 =
  'HTTP/1.1 505 HTTP Version Not Supported\r\nConnection: close\r\n\r\n<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>';

interface Listener {
  readonly name: string;
  readonly front: 'rest' | 'node';
  readonly port: () => number;
  /** The path the malformed request names. */
  readonly path: string;
  /** A request the listener answers with 200, written behind the malformed one. */
  readonly probe: () => string;
}

let main: TestServices;
let workers: TestServices;
let mainKey = '';
let workerKey = '';

const authorized =
  (key: () => string): (() => string) =>
  () =>
    `GET /v1/health/years HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key()}\r\n\r\n`;

const LISTENERS: readonly Listener[] = [
  {
    name: 'REST, main thread',
    front: 'rest',
    port: () => main.services.restPort,
    path: '/v1/health/years',
    probe: authorized(() => mainKey),
  },
  {
    name: 'REST, worker thread',
    front: 'rest',
    port: () => workers.services.restPort,
    path: '/v1/health/years',
    probe: authorized(() => workerKey),
  },
  { name: 'MCP', front: 'node', port: () => main.services.mcpPort, path: '/mcp', probe: () => 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' },
  {
    name: 'authorization server',
    front: 'node',
    port: () => Number(new URL(main.authUrl).port),
    path: '/healthz',
    probe: () => 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
  },
  {
    name: 'metrics',
    front: 'node',
    port: () => main.services.metricsPort!,
    path: '/metrics',
    probe: () => 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n',
  },
];

/** Cases uWS refuses while parsing, before any handler: its own 400, not a problem document. */
const UWS_REFUSES = new Set([
  'Transfer-Encoding with Content-Length',
  'a bare LF inside a header value',
  'a header line ended by a bare LF',
  'two Host fields',
]);
/** uWS leaves this connection idle instead of answering: pinned on its own below. */
const UWS_IDLES = 'a bare CR inside a header value';

type Outcome = 'problem' | 'uws 400' | 'closed unanswered';

function outcome(l: Listener, c: FramingCase): Outcome {
  if (l.front === 'node') return 'problem';
  if (UWS_REFUSES.has(c.name)) return 'uws 400';
  // A HEAD's 400 has no body to carry it past uWS's cork buffer (rest-writers.ts): it is written once
  // the read is parsed, and a request pipelined behind it makes uWS close the connection first.
  if (c.head === true) return 'closed unanswered';
  return 'problem';
}

const TITLES: Record<Outcome, string> = {
  problem: 'one 400 problem, then the connection is closed: the request behind it is never answered',
  'uws 400': "uWS's own 400, then the connection is closed: the request behind it is never answered",
  'closed unanswered': 'the connection is closed and neither it nor the request behind it is answered',
};

before(async () => {
  [main, workers] = await Promise.all([
    startTestServices({ metricsPort: 0, drainMs: 200 }),
    startTestServices({ workers: 1, drainMs: 200 }),
  ]);
  const user = { tier: 'pro' as const, userId: 'user-framing', label: 'test', now: Date.now() };
  mainKey = (await createKey(main.services.store, user)).plaintext;
  workerKey = (await createKey(workers.services.store, user)).plaintext;
});
after(async () => {
  await Promise.all([main?.close(), workers?.close()]);
});

function header(r: RawExchange['responses'][number], name: string): string | undefined {
  return r.headers.find(([k]) => k === name)?.[1];
}

function assertRefused(l: Listener, c: FramingCase, r: RawExchange): void {
  const what = `${c.name} on ${l.name}: ${JSON.stringify(r.raw.slice(0, 300))}`;
  assert.ok(r.closed, `the server closes the connection (${what})`);
  const expected = outcome(l, c);
  if (expected === 'closed unanswered') {
    assert.equal(r.raw, '', what);
    return;
  }
  if (expected === 'uws 400') {
    assert.equal(r.raw, UWS_400, what);
    return;
  }
  assert.equal(r.responses.length, 1, `exactly one response (${what})`);
  assert.equal(r.rest, '', `nothing after it (${what})`);
  const res = r.responses[0]!;
  assert.equal(res.status, 400, what);
  assert.equal(header(res, 'content-type'), 'application/problem+json', what);
  assert.equal(header(res, 'connection')?.toLowerCase(), 'close', what);
  if (c.head === true) {
    assert.equal(res.body, '', what);
    return;
  }
  const body = JSON.parse(res.body) as { type: string; status: number; detail: string; errors?: Array<{ field: string }> };
  assert.equal(body.status, 400, what);
  if (l.front === 'rest') {
    assert.equal(body.type, `${BASE}/problems/validation-error`, what);
    assert.ok(['(framing)', '(body)'].includes(body.errors?.[0]?.field ?? ''), what);
  } else {
    assert.equal(body.type, 'about:blank', what);
  }
  assert.match(body.detail, /Content-Length|Transfer-Encoding|Host|body|bare CR or LF/, what);
}

for (const l of LISTENERS) {
  describe(l.name, () => {
    for (const c of FRAMING_CASES) {
      if (l.front === 'rest' && c.name === UWS_IDLES) continue;
      test(`${c.name}: ${TITLES[outcome(l, c)]}`, async () => {
        const r = await rawExchange(l.port(), c.request(l.path) + l.probe(), 5000, c.head === true);
        assertRefused(l, c, r);
      });
    }

    test('a request with sound framing is served and so is the one behind it: a POST with a chunked body, a GET with Content-Length: 0', async () => {
      const chunked = `POST ${l.path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`;
      const zero = `GET ${l.path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`;
      for (const first of [chunked, zero]) {
        const r = await rawExchange(l.port(), `${first}${l.probe().replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}`, 5000);
        const what = `${first.split('\r\n')[0]} on ${l.name}: ${JSON.stringify(r.raw.slice(0, 300))}`;
        assert.equal(r.responses.length, 2, what);
        assert.notEqual(r.responses[0]!.status, 400, what);
        assert.equal(r.responses[1]!.status, 200, what);
      }
    });
  });
}

test('a CONNECT is answered 405 on every node:http listener, and a client that resets right after leaves the process serving', async () => {
  for (const l of LISTENERS.filter((x) => x.front === 'node')) {
    const answer = await new Promise<string>((resolve) => {
      let got = '';
      const socket = connect(l.port(), '127.0.0.1', () => socket.write('CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n'));
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        socket.resetAndDestroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(got));
    });
    assert.match(answer, /^HTTP\/1\.1 405 /, l.name);
    // The reset reaches the server's socket after the answer; give it the time to be handled.
    await sleep(200);
    const r = await rawExchange(l.port(), l.probe().replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'), 5000);
    assert.equal(r.responses[0]?.status, 200, `${l.name} still serves: ${JSON.stringify(r.raw.slice(0, 200))}`);
  }
});

test('REST: a HEAD with a body alone gets its 400 (no body) and the connection is closed', async () => {
  for (const l of LISTENERS.filter((x) => x.front === 'rest')) {
    const r = await rawExchange(l.port(), `HEAD ${l.path} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello`, 5000, true);
    const what = `${l.name}: ${JSON.stringify(r.raw)}`;
    assert.ok(r.closed, what);
    assert.equal(r.responses.length, 1, what);
    assert.equal(r.responses[0]!.status, 400, what);
    assert.equal(header(r.responses[0]!, 'connection')?.toLowerCase(), 'close', what);
    assert.equal(r.rest, '', what);
  }
});

test('REST: requests refused for their framing are never charged, and the requests behind them never reach the quota', async () => {
  const l = LISTENERS[0]!;
  const remaining = async (): Promise<number> => {
    const r = await fetch(`http://127.0.0.1:${l.port()}/v1/health/years`, { headers: { authorization: `Bearer ${mainKey}` } });
    await r.arrayBuffer();
    return Number(r.headers.get('ratelimit-remaining'));
  };
  const start = await remaining();
  for (const c of FRAMING_CASES) {
    if (c.name === UWS_IDLES) continue;
    const bad = c.request(l.path).replace('Host: x\r\n', `Host: x\r\nAuthorization: Bearer ${mainKey}\r\n`);
    await rawExchange(l.port(), bad + l.probe(), 5000, c.head === true);
  }
  assert.equal(await remaining(), start - 1);
});

describe(`what uWS answers itself (${MEASURED_UWS})`, {
  skip: UWS_PACKAGE === 'uws-legacy' ? false : `${LOADED_UWS} is not the measured build`,
}, () => {
  test('the loaded build is the one measured: another version must be measured and these tests updated', () => {
    assert.equal(LOADED_UWS, MEASURED_UWS);
  });

  const CLIENT_HELLO = Buffer.from(`16030100a5010000a10303${'00'.repeat(32)}000004130113020100007400000000`, 'hex');
  const REQUESTS: ReadonlyArray<readonly [string, string | Buffer]> = [
    ['HTTP/1.0', 'GET /v1/health/years HTTP/1.0\r\nHost: x\r\n\r\n'],
    ['an absolute-form target', 'GET http://x/v1/health/years HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['CONNECT', 'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n'],
    ['a NUL in the path', 'GET /v1/health/\0years HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['LF-only line endings', 'GET /v1/health/years HTTP/1.1\nHost: x\n\n'],
    ['a TLS ClientHello', CLIENT_HELLO],
  ];
  for (const [name, bytes] of REQUESTS) {
    test(`${name}: uWS's own 505 (HTML, not a problem document), then it closes the connection; nothing behind it is answered`, async () => {
      for (const l of LISTENERS.filter((x) => x.front === 'rest')) {
        const write = typeof bytes === 'string' ? bytes + l.probe() : Buffer.concat([bytes, Buffer.from(l.probe())]);
        const r = await rawExchange(l.port(), write, 5000);
        assert.equal(r.raw, UWS_505, `${name} on ${l.name}`);
        assert.ok(r.closed, `${name} on ${l.name}`);
      }
    });
  }

  test('a bare CR inside a header: uWS answers nothing, keeps the connection ~10 s (its idle timeout), then closes it; the request behind it is never answered', async () => {
    const l = LISTENERS[0]!;
    const c = FRAMING_CASES.find((x) => x.name === UWS_IDLES)!;
    const r = await rawExchange(l.port(), c.request(l.path) + l.probe(), 20_000);
    assert.equal(r.raw, '');
    assert.ok(r.closed, 'uWS closes it');
    // uWS's HTTP_IDLE_TIMEOUT_S is 10 s, checked on a timer of its own granularity.
    assert.ok(r.ms > 5000 && r.ms < 16_000, `closed after ${Math.round(r.ms)} ms`);
  });
});
