/**
 * `hpd serve` shutdown under clients that do not cooperate: with connections held open on every port
 * (silent ones, idle keep-alive ones, requests whose body never ends), SIGTERM fails readiness first,
 * then the process exits 0 within HPD_DRAIN_SECONDS plus a margin, having closed every connection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HPD, prepareServe, spawnServe } from '../helpers/serve-fixture.ts';
import { createSmallBufferNetns } from '../helpers/small-buffer-netns.ts';
import { serveConfig } from '../../src/config/serve-config.ts';

const DRAIN_MS = 1000;
/** Process start-up of the signal handler, closing the stores, exit. */
const MARGIN_MS = 3000;

interface Held {
  readonly label: string;
  readonly socket: Socket;
  closed: boolean;
}

/** A connection that sends `text` (maybe nothing) and then stays open; resolves once connected. */
function hold(label: string, port: number, text: string, host = '127.0.0.1'): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const held: Held = { label, socket, closed: false };
    socket.on('error', () => {});
    socket.once('close', () => (held.closed = true));
    socket.once('connect', () => {
      if (text !== '') socket.write(text);
      resolve(held);
    });
    socket.once('close', () => reject(new Error(`${label}: closed before connecting`)));
  });
}

/** A keep-alive connection that completed one request and now idles; resolves after the response. */
async function holdKeepAlive(label: string, port: number, path: string, host = '127.0.0.1'): Promise<Held> {
  const held = await hold(label, port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, host);
  let data = '';
  const deadline = Date.now() + 5000;
  held.socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
  while (!/\r\n\r\n/.test(data) && Date.now() < deadline) await sleep(10);
  assert.match(data, /^HTTP\/1\.1 200/, `${label}: ${data.slice(0, 100)}`);
  return held;
}

test('SIGTERM with connections held open on every port: /readyz 503 during the drain, exit 0 within the drain time', {
  timeout: 120_000,
}, async (t) => {
  const { dir, key, restPort, mcpPort, authPort, env } = await prepareServe(
    'hpd-drain-',
    { tier: 'pro', userId: 'user-drain' },
    { HPD_DRAIN_SECONDS: String(DRAIN_MS / 1000) },
  );
  const held: Held[] = [];
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const served = await spawnServe(env);
  const { child, exited } = served;
  t.after(() => {
    for (const h of held) h.socket.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const rest = `http://127.0.0.1:${restPort}`;
  assert.equal((await fetch(`${rest}/readyz`)).status, 200);

  for (const [name, port] of [
    ['rest', restPort],
    ['mcp', mcpPort],
    ['auth', authPort],
  ] as const)
    held.push(await hold(`${name} silent`, port, ''));
  held.push(await hold('mcp partial head', mcpPort, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
  held.push(await holdKeepAlive('rest keep-alive', restPort, '/healthz'));
  held.push(await holdKeepAlive('mcp keep-alive', mcpPort, '/.well-known/oauth-protected-resource/mcp'));
  held.push(await holdKeepAlive('auth keep-alive', authPort, '/.well-known/openid-configuration'));
  // Requests in flight whose bodies never end: these keep the drain going to its deadline.
  held.push(
    await hold(
      'mcp body in flight',
      mcpPort,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{`,
    ),
  );
  held.push(
    await hold(
      'auth body in flight',
      authPort,
      'POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=',
    ),
  );
  await sleep(100);

  const signalled = Date.now();
  child.kill('SIGTERM');
  const statuses: number[] = [];
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  // Poll readiness until the REST port closes (bounded by the drain and the margin).
  while (code === undefined && Date.now() - signalled < DRAIN_MS + MARGIN_MS) {
    try {
      const r = await fetch(`${rest}/readyz`, { signal: AbortSignal.timeout(500) });
      statuses.push(r.status);
      await r.arrayBuffer();
    } catch {
      break;
    }
    await sleep(50);
  }
  const result = await Promise.race([exited, sleep(DRAIN_MS + MARGIN_MS - (Date.now() - signalled)).then(() => 'timeout' as const)]);
  const took = Date.now() - signalled;
  assert.notEqual(
    result,
    'timeout',
    `still running ${took} ms after SIGTERM; held: ${held
      .filter((h) => !h.closed)
      .map((h) => h.label)
      .join(', ')}\n${served.stderr()}`,
  );
  assert.equal(result, 0, served.stderr());
  assert.ok(took < DRAIN_MS + MARGIN_MS, `exited after ${took} ms`);
  assert.match(served.stderr(), /SIGTERM: draining/);
  assert.match(served.stderr(), /stopped/);

  const firstFailing = statuses.indexOf(503);
  assert.ok(firstFailing >= 0, `/readyz answered 503 during the drain (saw ${statuses.join(', ')})`);
  assert.ok(
    statuses.slice(firstFailing).every((s) => s === 503),
    `never ready again once draining (${statuses.join(', ')})`,
  );

  await until(() => held.every((h) => h.closed), 1000);
  assert.deepEqual(
    held.filter((h) => !h.closed).map((h) => h.label),
    [],
    'every held connection was closed',
  );
  process.stderr.write(
    `# shutdown with ${held.length} held connections took ${took} ms (drain ${DRAIN_MS} ms); /readyz: ${statuses.join(',')}\n`,
  );
});

async function until(condition: () => boolean, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !condition() && Date.now() < deadline; ) await sleep(20);
}

/**
 * A client with a 4 KiB receive buffer (Debian's python3: Node cannot set SO_RCVBUF on TCP) that asks
 * for the OpenAPI document (~185 KB), reads nothing until a line arrives on its stdin, then reads the
 * whole answer: the server cannot hand the body to the kernel at once, so it is still writing it while
 * the drain runs.
 * Prints the status, the declared and the received body length, and whether it said Connection: close.
 */
const SLOW_READER = `
import json, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((sys.argv[3], int(sys.argv[1])))
s.sendall(b'GET /v1/openapi.json HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAccept-Encoding: identity\\r\\n\\r\\n')
print('sent', flush=True)
sys.stdin.readline()
data = b''
s.settimeout(10)
while True:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    data += chunk
    head, sep, body = data.partition(b'\\r\\n\\r\\n')
    if sep and b'content-length' in head.lower():
        declared = int([l for l in head.split(b'\\r\\n') if l.lower().startswith(b'content-length:')][0].split(b':')[1])
        if len(body) >= declared:
            break
head, sep, body = data.partition(b'\\r\\n\\r\\n')
lines = head.split(b'\\r\\n')
declared = [int(l.split(b':')[1]) for l in lines[1:] if l.lower().startswith(b'content-length:')]
print(json.dumps({'status': int(lines[0].split()[1]) if lines[0] else 0, 'declared': declared[0] if declared else -1,
                  'received': len(body), 'close': any(l.lower() == b'connection: close' for l in lines[1:])}))
`;

interface SlowRead {
  readonly status: number;
  readonly declared: number;
  readonly received: number;
  readonly close: boolean;
}

/** Starts the slow reader; resolves once its request is sent, with its result to come once told to read. */
async function slowRead(host: string, port: number): Promise<{ read(): void; result: Promise<SlowRead>; stop(): void }> {
  const child = spawn('/usr/bin/python3', ['-c', SLOW_READER, String(port), '0', host], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const sent = new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('sent\n')) resolve();
    }),
  );
  const result = new Promise<SlowRead>((resolve, reject) =>
    child.once('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as SlowRead);
      else reject(new Error(`slow reader exited ${code}: ${err}${out}`));
    }),
  );
  await Promise.race([sent, result]);
  return { read: () => child.stdin.write('go\n'), result, stop: () => child.kill('SIGKILL') };
}

/** Whether a new connection to `host:port` is accepted now. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

for (const workers of ['0', '1'])
  test(`HPD_WORKERS=${workers}: SIGTERM: /readyz fails at once on every listener while new requests are still served; then accepting stops, idle keep-alive connections are closed, and a response still being written finishes whole before the exit`, {
    timeout: 120_000,
  }, async (t) => {
    const DRAIN = 8000;
    const NOTICE = 2000;
    const { dir, key, restPort, mcpPort, authPort, env } = await prepareServe(
      'hpd-drain-order-',
      { tier: 'pro', userId: 'user-drain-order' },
      { HPD_DRAIN_SECONDS: String(DRAIN / 1000), HPD_DRAIN_NOTICE_SECONDS: String(NOTICE / 1000), HPD_WORKERS: workers },
    );
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // The server in a namespace with small send buffers, so a large body is still being written when the drain starts.
    const netns = createSmallBufferNetns();
    t.after(() => netns.remove());
    const host = netns.address;
    const child = netns.run(process.execPath, [HPD, 'serve'], { ...env, HPD_HOST: host });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const held: Held[] = [];
    t.after(() => {
      for (const h of held) h.socket.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('MCP on ')) resolve();
      });
      void exited.then((code) => reject(new Error(`hpd serve exited ${code}: ${stderr}`)));
    });
    let exitedAt = Number.NaN;
    void exited.then(() => (exitedAt = performance.now()));
    const origin = (port: number): string => `http://${host}:${port}`;
    held.push(await holdKeepAlive('rest keep-alive', restPort, '/healthz', host));
    held.push(await holdKeepAlive('mcp keep-alive', mcpPort, '/.well-known/oauth-protected-resource/mcp', host));
    held.push(await holdKeepAlive('auth keep-alive', authPort, '/.well-known/openid-configuration', host));
    const closedAt = new Map<string, number>();
    for (const h of held) h.socket.once('close', () => closedAt.set(h.label, performance.now()));
    const slow = await slowRead(host, restPort);
    t.after(() => slow.stop());
    await sleep(200);

    const signalled = performance.now();
    child.kill('SIGTERM');
    // From the moment the process handled the signal (a REST worker hears of it by message, within ms).
    await until(() => /SIGTERM: draining/.test(stderr), 5000);
    const draining = performance.now();
    assert.match(stderr, /SIGTERM: draining/);
    const readiness = await Promise.all(
      [restPort, mcpPort, authPort].map(async (p) => {
        let status = 0;
        for (const deadline = performance.now() + 500; status !== 503 && performance.now() < deadline; await sleep(10))
          status = await fetch(`${origin(p)}/readyz`).then((r) => r.status);
        return status;
      }),
    );
    assert.deepEqual(readiness, [503, 503, 503], 'readiness fails at once on all three listeners');
    const api = await fetch(`${origin(restPort)}/v1/health/years`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(
      `${api.status} ${api.headers.get('connection')} ${(await api.text()).length > 0}`,
      '200 close true',
      'requests are still served',
    );
    assert.deepEqual(
      await Promise.all([restPort, mcpPort, authPort].map((p) => accepts(host, p))),
      [true, true, true],
      'new connections are still accepted during the notice',
    );

    const answeredWithin = performance.now() - draining;
    assert.ok(answeredWithin < NOTICE, `all of this within the notice (${Math.round(answeredWithin)} ms)`);

    await sleep(NOTICE + 500 - (performance.now() - draining));
    assert.deepEqual(
      await Promise.all([restPort, mcpPort, authPort].map((p) => accepts(host, p))),
      [false, false, false],
      'no listener accepts after the notice',
    );
    assert.ok(Number.isNaN(exitedAt), 'still running: a response is being written');
    for (const label of ['mcp keep-alive', 'auth keep-alive'])
      assert.ok(closedAt.has(label), `${label}: closed once the listener stopped accepting`);

    // The client reads only now: until then the process must not end the response it is writing.
    await sleep(300);
    assert.ok(Number.isNaN(exitedAt), 'still running while the client does not read');
    const readingAt = performance.now();
    slow.read();
    const read = await slow.result;
    const code = await exited;
    const took = exitedAt - signalled;
    t.diagnostic(
      `SIGTERM to exit ${Math.round(took)} ms (notice ${NOTICE}, drain ${DRAIN}); slow response ${read.received}/${read.declared} bytes; keep-alive closed after ${[
        ...closedAt,
      ]
        .map(([l, at]) => `${l} ${Math.round(at - signalled)} ms`)
        .join(', ')}`,
    );
    assert.equal(code, 0, stderr);
    assert.equal(read.status, 200);
    assert.ok(read.declared > 100_000, `a body larger than the client's buffers (${read.declared})`);
    assert.equal(read.received, read.declared, 'the response being written when accepting stopped arrived whole');
    assert.ok(exitedAt > readingAt, 'exited only once the client read the response');
    assert.ok(took < DRAIN + MARGIN_MS, `exited ${Math.round(took)} ms after SIGTERM: within the drain`);
    await until(() => held.every((h) => h.closed), 1000);
    assert.deepEqual(
      held.filter((h) => !h.closed).map((h) => h.label),
      [],
      'every idle keep-alive connection was closed',
    );
  });

test('HPD_DRAIN_SECONDS and HPD_MAX_CONNECTIONS are validated: one line naming the variable, exit 2', () => {
  for (const [name, value] of [
    ['HPD_DRAIN_SECONDS', 'soon'],
    ['HPD_DRAIN_SECONDS', '-1'],
    ['HPD_MAX_CONNECTIONS', '0'],
    ['HPD_MAX_CONNECTIONS', '1.5'],
  ] as const) {
    const env: NodeJS.ProcessEnv = { ...process.env, [name]: value, HPD_DATA_DIR: join(tmpdir(), 'hpd-no-such-dir') };
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(process.execPath, [HPD, 'serve'], { env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, `${name}=${value}: ${r.stderr}`);
    // oidc-provider may print its own runtime warning when loaded; ours is the one hpd: line.
    const ours = r.stderr.split('\n').filter((l) => l.startsWith('hpd:'));
    assert.equal(ours.length, 1, r.stderr);
    assert.match(ours[0]!, new RegExp(`^hpd: ${name} must be .*"${value.replace('.', '\\.')}"`));
  }
});

test('HPD_DRAIN_NOTICE_SECONDS: 2 s by default, at most half of HPD_DRAIN_SECONDS, 0 turns it off; a bad value is refused naming the variable', () => {
  const notice = (env: NodeJS.ProcessEnv): number => serveConfig(env).drainNoticeMs;
  assert.equal(notice({}), 2000);
  assert.equal(notice({ HPD_DRAIN_SECONDS: '1' }), 500, 'requests in flight keep the other half of the drain');
  assert.equal(notice({ HPD_DRAIN_SECONDS: '0' }), 0);
  assert.equal(notice({ HPD_DRAIN_NOTICE_SECONDS: '0' }), 0);
  assert.equal(notice({ HPD_DRAIN_NOTICE_SECONDS: '0.75', HPD_DRAIN_SECONDS: '30' }), 750);
  assert.throws(
    () => serveConfig({ HPD_DRAIN_NOTICE_SECONDS: 'soon' }),
    (err: Error) =>
      err.name === 'ConfigError' && /^HPD_DRAIN_NOTICE_SECONDS must be a number of seconds from 0 to 3600, got "soon"$/.test(err.message),
  );
});
