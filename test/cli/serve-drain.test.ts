/**
 * `hpd serve` shutdown under clients that do not cooperate: with connections held open on every port
 * (silent ones, idle keep-alive ones, requests whose body never ends), SIGTERM fails readiness first,
 * then the process exits 0 within HPD_DRAIN_SECONDS plus a margin, having closed every connection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HPD, prepareServe, spawnServe } from '../helpers/serve-fixture.ts';

const DRAIN_MS = 1000;
/** Process start-up of the signal handler, closing the stores, exit. */
const MARGIN_MS = 3000;

interface Held {
  readonly label: string;
  readonly socket: Socket;
  closed: boolean;
}

/** A connection that sends `text` (maybe nothing) and then stays open; resolves once connected. */
function hold(label: string, port: number, text: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
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
async function holdKeepAlive(label: string, port: number, path: string): Promise<Held> {
  const held = await hold(label, port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
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
