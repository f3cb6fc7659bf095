/**
 * The docs page in a real browser (Debian's Chromium driven by playwright-core, as in
 * test/mcp/browser-login.test.ts): Swagger UI served by us renders every operation of the OpenAPI
 * document, and the page makes no request anywhere but the server on 127.0.0.1. Also the HAL index at
 * `/` that links to it, the static files' content types and caching, and the plans page.
 *
 * Needs /usr/bin/chromium (`npm test` installs it: bin/test-prerequisites.js); without it the test
 * fails rather than skips.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { DOCS_CSP, SWAGGER_ASSETS } from '../../src/http/docs-pages.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { BASE } from '../helpers/http-assert.ts';
import { startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

const CHROMIUM = '/usr/bin/chromium';

let s: FixtureServer;
before(async () => {
  s = await startFixtureServer({ limits: { free: 7 } });
});
after(() => s.close());

describe('/docs, / and /pricing', () => {
  test('/ is a HAL index linking the docs, the OpenAPI document, every collection, health and readiness', async () => {
    const res = await s.get('/', { tier: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const links = ((await res.json()) as { _links: Record<string, { href: string; templated?: boolean }> })._links;
    assert.equal(links.docs?.href, `${BASE}/docs`);
    assert.equal(links['service-desc']?.href, `${BASE}/v1/openapi.json`);
    assert.equal(links.health?.href, `${BASE}/healthz`);
    assert.equal(links.readiness?.href, `${BASE}/readyz`);
    assert.equal(links.pricing?.href, `${BASE}/pricing`);
    for (const op of OPERATIONS) {
      assert.ok(links[op.id]?.href.startsWith(`${BASE}${op.path}`), `${op.id} linked`);
      assert.equal(links[op.id]?.templated, op.query.order.length > 0 ? true : undefined, op.id);
    }
    assert.match(links.searchPlans!.href, /\{\?zip,age,ages,year,/);
  });

  test('/docs has a self-only CSP; the Swagger UI files have their content types and are cached for good under a versioned path', async () => {
    const page = await s.get('/docs', { tier: null });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('content-security-policy'), DOCS_CSP);
    assert.doesNotMatch(DOCS_CSP, /https?:|\*/, 'no other origin allowed');
    const html = await page.text();
    assert.match(html, /swagger-ui-bundle\.js/);
    assert.doesNotMatch(html, /https?:\/\//, 'no absolute URL in the page');
    for (const [file, type] of [
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['favicon-32x32.png', 'image/png'],
    ] as const) {
      const res = await s.get(`${SWAGGER_ASSETS}/${file}`, { tier: null });
      assert.equal(res.status, 200, file);
      assert.equal(res.headers.get('content-type'), type, file);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', file);
      assert.ok((await res.arrayBuffer()).byteLength > 500, file);
    }
    const init = await s.get('/docs/init.js', { tier: null });
    assert.match(await init.text(), /url: '\/v1\/openapi\.json'/);
    assert.equal((await s.get(`${SWAGGER_ASSETS}/index.html`, { tier: null })).status, 404, 'only the files the page uses are served');
    assert.equal((await s.get(`${SWAGGER_ASSETS}/../package.json`, { tier: null })).status, 404);
  });

  test('/pricing lists every tier with its daily limit as configured and anchors the licence terms', async () => {
    const res = await s.get('/pricing', { tier: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    const html = await res.text();
    assert.match(html, /<tr id="free"><th scope="row">Free<\/th><td>7<\/td>/, 'the configured free limit (7), not the default');
    assert.match(html, /<tr id="pro"><th scope="row">Pro<\/th><td>10,000<\/td>/);
    assert.match(html, /<tr id="enterprise"><th scope="row">Enterprise<\/th><td>100,000<\/td>/);
    assert.match(html, /id="terms"/);
    const doc = (await (await s.get('/v1/openapi.json', { tier: null })).json()) as { info: { license: { url: string } } };
    assert.equal(doc.info.license.url, `${BASE}/pricing#terms`);
  });

  test('Chromium renders every endpoint of the OpenAPI document and requests nothing but 127.0.0.1', { timeout: 60_000 }, async (t) => {
    assert.ok(
      existsSync(CHROMIUM),
      `${CHROMIUM} is missing: this test needs Debian's chromium (npm test installs it when run as root; otherwise: apt-get install chromium)`,
    );
    const doc = (await (await s.get('/v1/openapi.json', { tier: null })).json()) as { paths: Record<string, Record<string, unknown>> };
    const expected = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    // GET and HEAD of every operation's path and alias paths.
    assert.equal(expected.length, 2 * OPERATIONS.reduce((n, op) => n + 1 + (op.aliasPaths?.length ?? 0), 0));

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Any host name resolves nowhere: a request to another origin fails even if it were not seen below.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      ],
    });
    t.after(() => browser.close());
    const context = await browser.newContext();
    const requests: string[] = [];
    const violations: string[] = [];
    context.on('request', (req) => requests.push(req.url()));
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
    });
    page.on('pageerror', (err) => violations.push(err.message));
    await page.goto(`${s.url}/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
    await page.waitForLoadState('networkidle');
    const rendered = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (b) =>
          `${b.querySelector('.opblock-summary-method')?.textContent ?? ''} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`,
      ),
    );
    assert.deepEqual([...new Set(rendered)].sort(), expected, 'every operation, and nothing else, on the page');
    assert.ok(requests.length >= 4, `the page, its files and the document were requested: ${requests.join(', ')}`);
    const origin = new URL(s.url).origin;
    assert.deepEqual(
      requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:')),
      [],
      'no request leaves 127.0.0.1',
    );
    assert.ok(requests.includes(`${origin}/v1/openapi.json`), 'the page loaded our document');
    assert.deepEqual(violations, [], 'no CSP violation or page error');
    t.diagnostic(
      `${rendered.length} operations rendered; ${requests.length} requests, all to ${origin}: ${requests.map((u) => u.replace(origin, '')).join(' ')}`,
    );
  });
});
