/**
 * The node:http listeners (MCP, embedded authorization server) under hostile clients, on the whole
 * service as `hpd serve` runs it: a flood of idle connections is capped and timed out while REST keeps
 * answering; slow bodies are cut at the request timeout; malformed request targets get problem
 * documents (MCP) or at least no 500 with a stack (authorization server), and never charge the quota.
 * Limits are lowered through the services' configuration so the test stays fast.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKey } from '../../src/policy/api-keys.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';

const LIMITS = {
  maxConnections: 200,
  maxConnectionsPerAddress: 0,
  idleTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  requestTimeoutMs: 2000,
  keepAliveTimeoutMs: 1000,
};

let svc: TestServices;
let key: string;
let mcpPort: number;
let authPort: number;

before(async () => {
  svc = await startTestServices({ listenerLimits: LIMITS });
  mcpPort = svc.services.mcpPort;
  authPort = Number(new URL(svc.authUrl).port);
  key = (await createKey(svc.services.store, { tier: 'pro', userId: 'user-listeners', label: 'test', now: Date.now() })).plaintext;
});
after(() => svc?.close());

/** Polls until `condition` holds or `ms` pass. */
async function until(condition: () => boolean, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !condition() && Date.now() < deadline; ) await sleep(20);
}

interface Held {
  readonly socket: Socket;
  closedAt: number | null;
}

/** Opens `n` TCP connections that never send a byte; resolves once each connected or failed. */
async function holdIdle(port: number, n: number): Promise<Held[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Held>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          const held: Held = { socket, closedAt: null };
          socket.on('error', () => {});
          socket.once('close', () => (held.closedAt = Date.now()));
          socket.once('connect', () => resolve(held));
          socket.once('close', () => resolve(held));
        }),
    ),
  );
}

interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** Sends `text` on a fresh connection and reads until the server closes it (bounded by `ms`). */
function raw(port: number, text: string, ms = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      const end = data.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (m === null || end < 0)
        return reject(new Error(`no HTTP response to ${JSON.stringify(text.split('\r\n')[0])}: ${JSON.stringify(data.slice(0, 200))}`));
      resolve({ status: Number(m[1]), head: data.slice(0, end).toLowerCase(), body: data.slice(end + 4) });
    });
    socket.write(text);
  });
}

test('400 idle connections on the MCP port: 200 accepted, the rest dropped at once, REST and the authorization server answer, no CPU spin, idle ones closed after the idle timeout, then MCP answers again', {
  timeout: 30_000,
}, async () => {
  const started = Date.now();
  const cpuBefore = process.cpuUsage();
  const held = await holdIdle(mcpPort, 400);
  await sleep(300);
  const droppedEarly = held.filter((h) => h.closedAt !== null).length;
  assert.ok(droppedEarly >= 190, `over the cap connections are closed at once (closed ${droppedEarly} of 400)`);
  assert.ok(400 - droppedEarly <= LIMITS.maxConnections, `at most the cap stays open (${400 - droppedEarly})`);

  const health = await fetch(`${svc.restUrl}/healthz`);
  assert.equal(health.status, 200, 'REST answers during the flood');
  const years = await fetch(`${svc.restUrl}/v1/health/years`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(years.status, 200);
  const discovery = await fetch(`${svc.authUrl}/.well-known/oauth-authorization-server`);
  assert.equal(discovery.status, 200, 'the authorization server has its own cap');
  await discovery.arrayBuffer();

  // Both ends of the flood live in this process: an accept loop spinning on it would show here.
  const cpu = process.cpuUsage(cpuBefore);
  const wall = Date.now() - started;
  assert.ok((cpu.user + cpu.system) / 1000 < wall * 0.8, `CPU ${(cpu.user + cpu.system) / 1000} ms over ${wall} ms`);

  await until(() => held.every((h) => h.closedAt !== null), LIMITS.idleTimeoutMs + 3000);
  const open = held.filter((h) => h.closedAt === null).length;
  for (const h of held) h.socket.destroy();
  assert.equal(open, 0, 'every silent connection is closed after the idle timeout');
  const lastClose = Math.max(...held.map((h) => h.closedAt ?? Infinity)) - started;
  assert.ok(lastClose < LIMITS.idleTimeoutMs + 2000, `closed by ${lastClose} ms`);

  const mcp = await fetch(svc.mcpUrl, { method: 'POST', body: '{}' });
  assert.equal(mcp.status, 401, 'MCP answers once the flood is gone');
  await mcp.arrayBuffer();
});

test('a slow-loris body on MCP is cut at the request timeout; a body over 1 MiB is refused', { timeout: 15_000 }, async () => {
  const socket = connect(mcpPort, '127.0.0.1');
  socket.on('error', () => {});
  let reply = '';
  socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  const started = Date.now();
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{`,
  );
  // One byte every 200 ms keeps the connection from ever being idle.
  const drip = setInterval(() => socket.write(' '), 200);
  const at = await Promise.race([closed, sleep(LIMITS.requestTimeoutMs + 4000).then(() => null)]);
  clearInterval(drip);
  socket.destroy();
  assert.ok(at !== null, 'the server closed the connection');
  assert.ok(at - started < LIMITS.requestTimeoutMs + 1500, `closed after ${at - started} ms`);
  assert.doesNotMatch(reply, /^HTTP\/1\.1 200/);

  const big = await raw(
    mcpPort,
    `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${2 << 20}\r\nConnection: close\r\n\r\n${'x'.repeat((1 << 20) + 100)}`,
  );
  assert.equal(big.status, 413);
});

test('MCP answers malformed request targets with problem documents, not 500, and charges no quota', { timeout: 15_000 }, async () => {
  const before = svc.services.quota.peek('user-listeners', 'pro').remaining;
  const targets: Array<[string, number]> = [
    ['//', 404],
    ['http://[', 400],
    ['*', 400],
    ['//evil.example/mcp', 404],
    ['/mcp/../../x', 404],
  ];
  for (const [target, status] of targets) {
    for (const auth of ['', `Authorization: Bearer ${key}\r\n`]) {
      const r = await raw(mcpPort, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`);
      assert.equal(r.status, status, `GET ${target}: ${r.body}`);
      assert.match(r.head, /content-type: application\/problem\+json/, `GET ${target}`);
      const doc = JSON.parse(r.body) as { status: number; type: string; detail: string };
      assert.equal(doc.status, status);
      assert.match(doc.type, /\/problems\//);
    }
  }
  assert.equal(svc.services.quota.peek('user-listeners', 'pro').remaining, before, 'no quota charged');
});

test('the authorization server survives malformed request targets: no 500, no stack trace', { timeout: 15_000 }, async () => {
  for (const target of ['//', 'http://[', '*', '//evil.example/x', '/%ZZ']) {
    const r = await raw(authPort, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    assert.ok(r.status >= 400 && r.status < 500, `GET ${target}: ${r.status} ${r.body.slice(0, 200)}`);
    assert.doesNotMatch(r.body, /\n\s+at /, `GET ${target}: no stack trace`);
  }
  const discovery = await fetch(`${svc.authUrl}/.well-known/oauth-authorization-server`);
  assert.equal(discovery.status, 200);
  await discovery.arrayBuffer();
});

test("what Node's HTTP parser refuses, and CONNECT, get problem documents on both node:http listeners", { timeout: 15_000 }, async () => {
  const cases: Array<[string, number]> = [
    ['get /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400],
    ['G@T /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400],
    [`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n', 405],
  ];
  for (const port of [mcpPort, authPort]) {
    for (const [text, status] of cases) {
      const r = await raw(port, text);
      const line = text.split('\r\n')[0]!.slice(0, 40);
      assert.equal(r.status, status, `${port} ${line}: ${r.body}`);
      assert.match(r.head, /content-type: application\/problem\+json/, line);
      const doc = JSON.parse(r.body) as { status: number; type: string; title: string; detail: string };
      assert.equal(doc.status, status);
      assert.equal(doc.type, 'about:blank');
      assert.equal(typeof doc.detail, 'string');
    }
  }
});

test('MCP params that do not fit the method are -32602 Invalid params naming the member, not -32603', { timeout: 15_000 }, async () => {
  const headers = { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const init = await fetch(svc.mcpUrl, {
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
  });
  await init.text();
  const sid = init.headers.get('mcp-session-id')!;
  const inSession = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_plans","arguments":5}}',
      inSession,
      /tools\/call: params\.arguments/,
    ],
    ['{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"arguments":{}}}', inSession, /tools\/call: params\.name/],
    ['{"jsonrpc":"2.0","id":8,"method":"initialize","params":{}}', inSession, /initialize: params\./],
  ];
  for (const [body, h, message] of cases) {
    const r = await fetch(svc.mcpUrl, { method: 'POST', headers: h, body });
    const doc = (await r.json()) as { id: unknown; error?: { code: number; message: string } };
    assert.equal(r.status, 200, body);
    assert.equal(doc.error?.code, -32602, body);
    assert.match(doc.error?.message ?? '', message);
    assert.equal(doc.id, (JSON.parse(body) as { id: unknown }).id, 'the error answers the request by its id');
  }
  // A well-formed call in the same session still works.
  const ok = await fetch(svc.mcpUrl, {
    method: 'POST',
    headers: inSession,
    body: '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_plan_years","arguments":{}}}',
  });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /available_years/);
});

test('a client that pipelines after a refused request still receives the refusal (no reset of the answer)', {
  timeout: 15_000,
}, async () => {
  const one = `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`;
  const payload = one.repeat(200);
  const answers = await Promise.all(
    Array.from(
      { length: 16 },
      () =>
        new Promise<{ data: string; error: string | null }>((resolve) => {
          let data = '';
          let error: string | null = null;
          const socket = connect(mcpPort, '127.0.0.1', () => socket.write(payload));
          const timer = setTimeout(() => socket.destroy(), 5000);
          socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
          socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
          socket.once('close', () => {
            clearTimeout(timer);
            resolve({ data, error });
          });
        }),
    ),
  );
  for (const a of answers) {
    assert.match(a.data, /^HTTP\/1\.1 431 [\s\S]*"status":431/, `got ${JSON.stringify(a.data.slice(0, 80))}`);
    // A reset may destroy the answer before a slower client reads it: the close must be orderly.
    assert.equal(a.error, null, 'the connection ends with a FIN, not a reset');
  }
});
