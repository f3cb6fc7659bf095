/**
 * /metrics end to end: the whole service with 2 REST worker threads, real requests, a scrape checked by
 * Debian's `promtool check metrics`, and counts that must be the sum over every thread.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createKey } from '../../src/policy/api-keys.ts';
import { startTestServices, type TestServices } from '../helpers/services.ts';

const PROMTOOL = '/usr/bin/promtool';

/** The value of one series in an exposition, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics (2 REST workers)', () => {
  let svc: TestServices;
  let pro: string;
  let free: string;
  let metricsUrl: string;

  before(async () => {
    svc = await startTestServices({ workers: 2, metricsPort: 0, limits: { free: 1 } });
    pro = (await createKey(svc.services.store, { tier: 'pro', userId: 'user-metrics', label: 'test', now: Date.now() })).plaintext;
    free = (await createKey(svc.services.store, { tier: 'free', userId: 'user-free', label: 'test', now: Date.now() })).plaintext;
    assert.notEqual(svc.services.metricsPort, null);
    metricsUrl = `http://127.0.0.1:${svc.services.metricsPort}/metrics`;
  });
  after(() => svc.close());

  it('counts 3 searches made on separate connections (spread over both workers) as 3, and passes promtool', async () => {
    const get = (path: string, key?: string): Promise<Response> =>
      // A new connection per request: the acceptor hands connections to the workers in turn.
      fetch(`${svc.restUrl}${path}`, {
        headers: { connection: 'close', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      });
    for (let i = 0; i < 3; i++) {
      const r = await get('/v1/health/plans?zip=77477&age=40&year=2025', pro);
      assert.equal(r.status, 200, await r.text());
    }
    for (let i = 0; i < 2; i++) assert.equal((await get('/v1/health/years', pro)).status, 200);
    assert.equal((await get('/v1/health/plans/99999XX9999999', pro)).status, 404);
    assert.equal((await get('/v1/health/years')).status, 401);
    assert.equal((await get('/v1/health/years', 'hpd_live_not-a-real-key')).status, 401);
    assert.equal((await get('/v1/health/years', free)).status, 200);
    assert.equal((await get('/v1/health/years', free)).status, 429);
    assert.equal((await get('/no/such/path')).status, 404);

    const r = await fetch(metricsUrl);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await r.text();

    const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(check.error, undefined, `${PROMTOOL} is missing: apt-get install -y prometheus`);
    assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}\n--- exposition\n${text}`);

    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="/v1/health/plans",status="200"}'), 3);
    assert.equal(sample(text, 'hpd_http_request_duration_seconds_count{front="rest",route="/v1/health/plans"}'), 3);
    assert.equal(sample(text, 'hpd_http_request_duration_seconds_bucket{front="rest",route="/v1/health/plans",le="+Inf"}'), 3);
    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="/v1/health/plans/{plan_id}",status="404"}'), 1);
    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="/v1/health/years",status="200"}'), 3);
    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="/v1/health/years",status="401"}'), 2);
    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="/v1/health/years",status="429"}'), 1);
    assert.equal(sample(text, 'hpd_http_requests_total{front="rest",route="other",status="404"}'), 1);
    assert.ok(!text.includes('99999XX9999999') && !text.includes('/no/such/path'), 'raw paths must never become labels');
    assert.equal(sample(text, 'hpd_auth_failures_total{front="rest",reason="missing"}'), 1);
    assert.equal(sample(text, 'hpd_auth_failures_total{front="rest",reason="invalid"}'), 1);
    assert.equal(sample(text, 'hpd_quota_refusals_total{tier="free"}'), 1);
    // /years answered three times: each worker's cache misses once, at most, then hits.
    const misses = sample(text, 'hpd_response_cache_lookups_total{result="miss"}') ?? 0;
    assert.ok(misses >= 1 && misses <= 2, `misses: ${misses}`);
    assert.equal(misses + (sample(text, 'hpd_response_cache_lookups_total{result="hit"}') ?? 0), 3);
    const registry = svc.services.registry;
    assert.equal(sample(text, `hpd_build_info{year="2025",build="${registry.get(2025)!.ds.buildHash}"}`), 1);
    assert.ok((sample(text, 'hpd_dataset_bytes{year="2025",part="tables"}') ?? 0) > 0);
    assert.equal(sample(text, 'hpd_rest_workers'), 2);
    assert.equal(sample(text, 'hpd_state_store_health{state="ok"}'), 1);
    for (const state of ['degraded', 'lost', 'unavailable']) assert.equal(sample(text, `hpd_state_store_health{state="${state}"}`), 0);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
    assert.ok((sample(text, 'process_cpu_user_seconds_total') ?? 0) > 0);
  });

  it('counts MCP and authorization-server requests, including their health probes', async () => {
    const mcpOrigin = new URL(svc.mcpUrl).origin;
    assert.equal((await fetch(`${mcpOrigin}/healthz`)).status, 200);
    assert.equal((await fetch(svc.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401);
    assert.equal((await fetch(`${svc.authUrl}/readyz`)).status, 200);
    const text = await (await fetch(metricsUrl)).text();
    assert.equal(sample(text, 'hpd_http_requests_total{front="mcp",route="/healthz",status="200"}'), 1);
    assert.equal(sample(text, 'hpd_http_requests_total{front="mcp",route="/mcp",status="401"}'), 1);
    assert.equal(sample(text, 'hpd_auth_failures_total{front="mcp",reason="missing"}'), 1);
    assert.equal(sample(text, 'hpd_http_requests_total{front="auth",route="/readyz",status="200"}'), 1);
  });

  it('serves only GET and HEAD /metrics on its listener, with RFC 9457 problems otherwise', async () => {
    const other = await fetch(metricsUrl.replace('/metrics', '/v1/health/years'));
    assert.equal(other.status, 404);
    assert.equal(other.headers.get('content-type'), 'application/problem+json');
    assert.equal(((await other.json()) as { status: number }).status, 404);
    const post = await fetch(metricsUrl, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });
});

describe('/metrics off', () => {
  it('is not served when no metrics port is configured', async () => {
    const svc = await startTestServices();
    try {
      assert.equal(svc.services.metricsPort, null);
    } finally {
      await svc.close();
    }
  });
});
