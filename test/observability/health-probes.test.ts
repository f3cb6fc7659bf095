/**
 * /healthz and /readyz on the MCP and authorization listeners answer as REST does, and readiness
 * follows the state store (degraded or lost: still ready, known keys are served; unavailable: not) and the drain.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHealthProbes } from '../../src/observability/health-probes.ts';
import type { StoreHealth } from '../../src/policy/state-store.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';

describe('health probes on every listener', () => {
  let svc: TestServices;
  before(async () => {
    svc = await startTestServices();
  });
  after(() => svc.close());

  it('MCP and the authorization server answer /healthz and /readyz with the REST bodies', async () => {
    const origins = { rest: svc.restUrl, mcp: new URL(svc.mcpUrl).origin, auth: svc.authUrl };
    const rest = {
      health: await (await fetch(`${origins.rest}/healthz`)).json(),
      ready: await (await fetch(`${origins.rest}/readyz`)).json(),
    };
    assert.deepEqual(rest.health, { status: 'ok' });
    assert.equal((rest.ready as { status: string }).status, 'ready');
    for (const origin of [origins.mcp, origins.auth]) {
      const h = await fetch(`${origin}/healthz`);
      assert.equal(h.status, 200, origin);
      assert.equal(h.headers.get('content-type'), 'application/json');
      assert.deepEqual(await h.json(), rest.health);
      const r = await fetch(`${origin}/readyz`);
      assert.equal(r.status, 200, origin);
      assert.deepEqual(await r.json(), rest.ready);
      const head = await fetch(`${origin}/readyz`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');
    }
  });
});

describe('readiness states (node:http listener on port 0)', () => {
  let health: StoreHealth = 'ok';
  const registry = { years: [2025], version: 'v', builds: { 2025: 'abc' } };
  const probes = createHealthProbes({ store: { health: () => health }, registry: () => registry as never });
  const server = createServer((req, res) => {
    if (!probes.answer(req, res, req.url ?? '/')) res.writeHead(404).end();
  });
  let url = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ready = async (): Promise<[number, string]> => {
    const r = await fetch(`${url}/readyz`);
    return [r.status, ((await r.json()) as { status: string }).status];
  };

  it('is ready, stays ready while degraded or lost, fails when unavailable and while draining; liveness stays 200', async () => {
    assert.deepEqual(await ready(), [200, 'ready']);
    health = 'degraded';
    assert.deepEqual(await ready(), [200, 'degraded']);
    health = 'lost';
    assert.deepEqual(await ready(), [200, 'lost']);
    health = 'unavailable';
    assert.deepEqual(await ready(), [503, 'unavailable']);
    health = 'ok';
    probes.drain();
    assert.deepEqual(await ready(), [503, 'draining']);
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    assert.equal((await fetch(`${url}/other`)).status, 404);
  });
});
