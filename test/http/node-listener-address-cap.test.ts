/**
 * The per-address connection cap of the node:http listeners (MCP, authorization server, metrics) on the whole
 * service: one address holding slow connections, reopened as they close, up to the listener's global
 * cap takes only its own share; another address's requests are all answered.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { eventually } from '../helpers/eventually.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';

const LIMITS = {
  maxConnections: 40,
  maxConnectionsPerAddress: 10,
  idleTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
};
const ATTACKER = '127.0.0.2';
const VICTIM = '127.0.0.3';

let svc: TestServices;

before(async () => {
  svc = await startTestServices({ listenerLimits: LIMITS, metricsPort: 0 });
});
after(() => svc?.close());

/** One request from `localAddress` on a fresh connection: its status, or 0 when nothing answered. */
function status(url: string, localAddress: string, method: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { method, localAddress, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(5000, () => req.destroy());
    req.once('error', () => resolve(0));
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

/**
 * `n` connections from `localAddress` that send a request head a byte every 200 ms and never finish
 * it; each one closed is opened again until stop(). `answers` collects what the server wrote to them.
 */
function slowFlood(port: number, localAddress: string, n: number): { open(): number; answers: string[]; stop(): void } {
  const sockets = new Set<Socket>();
  const answers: string[] = [];
  let stopped = false;
  const head = 'POST /mcp HTTP/1.1\r\nHost: x\r\n';
  const one = (): void => {
    if (stopped) return;
    const s = connect({ port, host: '127.0.0.1', localAddress });
    let sent = 0;
    let got = '';
    const timer = setInterval(() => s.write(head[sent++ % head.length]!), 200);
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('error', () => {});
    s.once('connect', () => sockets.add(s));
    s.once('close', () => {
      clearInterval(timer);
      sockets.delete(s);
      if (got !== '') answers.push(got);
      setTimeout(one, 20);
    });
  };
  for (let i = 0; i < n; i++) one();
  return {
    open: () => sockets.size,
    answers,
    stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** Where each listener is probed, the method, and the status a well-formed probe gets. */
function probe(listener: 'MCP' | 'authorization' | 'metrics'): { url: string; method: string; expected: number } {
  if (listener === 'MCP') return { url: svc.mcpUrl, method: 'POST', expected: 401 };
  if (listener === 'authorization') return { url: `${svc.authUrl}/.well-known/oauth-authorization-server`, method: 'GET', expected: 200 };
  return { url: `http://127.0.0.1:${svc.services.metricsPort}/metrics`, method: 'GET', expected: 200 };
}

for (const listener of ['MCP', 'authorization', 'metrics'] as const) {
  test(`${listener} listener: an address flooding it with slow connections holds at most its share; another address gets every answer`, {
    timeout: 60_000,
  }, async () => {
    const { url, method, expected } = probe(listener);
    const flood = slowFlood(Number(new URL(url).port), ATTACKER, LIMITS.maxConnections + 20);
    try {
      await eventually(
        'the flood connects and is refused past its share',
        () => flood.open() > 0 && flood.answers.some((a) => a.startsWith('HTTP/1.1 429 ')),
        10_000,
      );
      let answered = 0;
      const total = 100;
      for (let batch = 0; batch < total / 10; batch++) {
        const got = await Promise.all(Array.from({ length: 10 }, () => status(url, VICTIM, method)));
        answered += got.filter((s) => s === expected).length;
      }
      assert.ok(answered >= total * 0.99, `${answered} of ${total} of the other address's requests answered ${expected}`);
      const refusals = flood.answers.filter((a) => a.startsWith('HTTP/1.1 429 '));
      assert.ok(refusals.length > 0, 'the flood is refused past its share');
      assert.match(refusals[0]!, /application\/problem\+json[\s\S]*Too many connections from this address \(limit 10\)/);
      assert.match(refusals[0]!, /\r\nretry-after: 1\r\n/);
    } finally {
      flood.stop();
    }
  });
}
