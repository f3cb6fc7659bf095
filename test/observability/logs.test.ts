/**
 * Structured logs of `hpd serve` (2 REST workers, full access log): JSON lines on stdout for start,
 * every request and stop; never a key, a token or an Authorization header, on stdout or stderr.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { readSetting } from '../../src/config/settings.ts';
import { freePorts } from '../helpers/services.ts';
import { prepareServe, spawnServe, type ServeChild, type ServeFixture } from '../helpers/serve-fixture.ts';

type Line = Record<string, unknown>;

const jsonLines = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

describe('hpd serve logs (HPD_ACCESS_LOG=full, 2 workers)', () => {
  let fx: ServeFixture;
  let serve: ServeChild;
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLW5vdC12YWxpZA';

  before(async () => {
    const [metricsPort] = (await freePorts(1)) as [number];
    fx = await prepareServe(
      'hpd-logs-',
      { userId: 'user-logs', tier: 'pro' },
      { HPD_WORKERS: '2', HPD_ACCESS_LOG: 'full', HPD_METRICS_PORT: String(metricsPort) },
    );
    serve = await spawnServe(fx.env);
  });
  after(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    rmSync(fx.dir, { recursive: true, force: true });
  });

  it('logs start, each request with its id and route template, and stop; no credential anywhere', async () => {
    const rest = `http://127.0.0.1:${fx.restPort}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${rest}/v1/health/plans?zip=77477&age=40&year=2025`, {
        headers: { authorization: `Bearer ${fx.key}`, connection: 'close' },
      });
      assert.equal(r.status, 200);
      ids.push(r.headers.get('x-request-id')!);
    }
    // A key in the query string (not a way to authenticate, but clients try) and a rejected token.
    assert.equal((await fetch(`${rest}/v1/health/zips/77477?api_key=${fx.key}`)).status, 401);
    assert.equal(
      (
        await fetch(`http://127.0.0.1:${fx.mcpPort}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
      401,
    );
    assert.equal(
      (
        await fetch(`http://127.0.0.1:${fx.mcpPort}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${fx.key}`, 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
      400,
    );

    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0);
    const lines = jsonLines(serve.stdout());
    for (const l of lines)
      assert.ok(typeof l.time === 'string' && typeof l.level === 'string' && typeof l.pid === 'number', JSON.stringify(l));
    assert.ok(
      lines.some((l) => l.event === 'started' && l.restPort === fx.restPort && l.workers === 2),
      'a start line',
    );
    assert.ok(
      lines.some((l) => l.event === 'stopped'),
      'a stop line',
    );
    const access = lines.filter((l) => l.log === 'access');
    for (const id of ids) {
      const line = access.find((l) => l.reqId === id);
      assert.ok(line !== undefined, `access line for ${id}`);
      assert.equal(line.route, '/v1/health/plans');
      assert.equal(line.status, 200);
      assert.match(String(line.thread), /^rest worker [01]$/);
    }
    assert.ok(access.some((l) => l.route === '/v1/health/zips/{zip}' && l.status === 401 && l.path === '/v1/health/zips/77477'));
    assert.equal(access.filter((l) => l.route === '/mcp').length, 2);
    const everything = serve.stdout() + serve.stderr();
    assert.ok(!everything.includes(fx.key), 'the API key was logged');
    assert.ok(!everything.includes(token), 'the access token was logged');
    const leak = /.{0,120}(authorization"?\s*[:=]|Bearer ).{0,120}/i.exec(everything);
    assert.equal(leak, null, `an Authorization header was logged: ${leak?.[0]}`);
  });
});

describe('HPD_ACCESS_LOG values', () => {
  it('reads off, full and a rate, and refuses anything else', () => {
    const rate = (v: string | undefined): number => readSetting('accessLog', v === undefined ? {} : { HPD_ACCESS_LOG: v });
    assert.equal(rate(undefined), 0);
    assert.equal(rate('off'), 0);
    assert.equal(rate('full'), 1);
    assert.equal(rate('0.01'), 0.01);
    assert.equal(rate('1'), 1);
    for (const bad of ['on', '0', '1.5', '-0.1', 'abc', '.']) assert.throws(() => rate(bad), /HPD_ACCESS_LOG/, bad);
  });
});
