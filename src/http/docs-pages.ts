/**
 * @module The human-facing pages of the REST front: the HAL index at `/`, the Swagger UI docs page at
 * `/docs` with its static files, and the plans page at `/pricing` (the default upgrade URL of 402 and
 * 429 problems).
 *
 * Swagger UI comes from the swagger-ui-dist package and is served by us: the page makes no request to
 * any other origin, and its Content-Security-Policy forbids it to. Its files are read once, when first
 * asked for, and served under the package's version so a year of immutable caching is honest.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Operation } from '../operations/operation.ts';
import { TIER_RANK } from '../policy/tiers.ts';
import { TIERS, type Tier } from '../policy/tiers.ts';

export interface Page {
  readonly pattern: string;
  readonly contentType: string;
  readonly cacheControl: string;
  /** Content-Security-Policy of an HTML page. */
  readonly csp?: string;
  readonly body: () => Buffer;
}

export interface PagesConfig {
  readonly baseUrl: string;
  readonly operations: ReadonlyArray<Operation<never>>;
  /** Requests per UTC day of each tier, as enforced. */
  readonly dailyLimit: (tier: Tier) => number;
}

const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const SWAGGER_VERSION = (JSON.parse(readFileSync(join(SWAGGER_DIR, 'package.json'), 'utf8')) as { version: string }).version;
/** Where the Swagger UI files are served: versioned, so they can be cached for good. */
export const SWAGGER_ASSETS = `/docs/swagger-ui/${SWAGGER_VERSION}`;

/** The files the page uses, with their content types; nothing else of the package is served. */
const SWAGGER_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Only our own origin. Swagger UI sets style attributes (hence 'unsafe-inline' for styles only) and
 * draws its icons as data: images; no script runs inline and nothing is fetched from elsewhere.
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Static pages: no script at all. */
const STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HTML = 'text/html; charset=utf-8';
const NO_CACHE = 'no-cache';
const IMMUTABLE = 'public, max-age=31536000, immutable';

function once(make: () => string | Buffer): () => Buffer {
  let body: Buffer | undefined;
  return () => (body ??= Buffer.from(make()));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** RFC 6570 template of an operation's URL: path variables as they are, query parameters as `{?a,b}`. */
function hrefTemplate(baseUrl: string, op: Operation<never>): string {
  const query = op.query.order.filter((n) => !op.pathParams.includes(n));
  return `${baseUrl}${op.path}${query.length > 0 ? `{?${query.join(',')}}` : ''}`;
}

export function indexBody(cfg: PagesConfig): Record<string, unknown> {
  const b = cfg.baseUrl;
  const links: Record<string, unknown> = {
    self: { href: `${b}/`, type: 'application/json' },
    docs: { href: `${b}/docs`, type: 'text/html', title: 'API documentation' },
    'service-desc': { href: `${b}/v1/openapi.json`, type: 'application/openapi+json', title: 'OpenAPI 3.1 document' },
    pricing: { href: `${b}/pricing`, type: 'text/html', title: 'Plans and daily limits' },
    health: { href: `${b}/healthz`, type: 'application/json' },
    readiness: { href: `${b}/readyz`, type: 'application/json' },
  };
  for (const op of cfg.operations) {
    const href = hrefTemplate(b, op);
    links[op.id] = { href, ...(href.includes('{') ? { templated: true } : {}), type: 'application/json', title: op.summary };
  }
  return {
    _links: links,
    title: 'Health Plan Data Service',
    description: 'ACA marketplace health plan data. Every link but docs, pricing and health needs an API key.',
  };
}

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Health Plan Data Service — API documentation</title>
<link rel="stylesheet" href="${SWAGGER_ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="${SWAGGER_ASSETS}/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${SWAGGER_ASSETS}/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Loads our document, relative to the page so the docs work behind any proxy. No validator badge
 * (validator.swagger.io would be a request to another origin).
 */
const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

function pricingHtml(cfg: PagesConfig): string {
  const rows = TIERS.map((tier) => {
    const ops = cfg.operations.filter((op) => TIER_RANK[op.tier] <= TIER_RANK[tier]).map((op) => escapeHtml(op.summary));
    const extra = tier === 'free' ? '' : '<br>All search filters and sort orders, tax-credit prices in search';
    return `<tr id="${tier}"><th scope="row">${tier[0]!.toUpperCase()}${tier.slice(1)}</th><td>${cfg.dailyLimit(tier).toLocaleString('en-US')}</td><td>${ops.join(', ')}${extra}</td></tr>`;
  }).join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Health Plan Data Service — plans</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.5rem;text-align:left;vertical-align:top}</style></head>
<body>
<h1 id="pricing">Plans</h1>
<p>Every request needs an API key. Each plan has a daily request limit, reset at 00:00 UTC; a request over it is answered 429 with <code>Retry-After</code>. Endpoints and parameters of a higher plan are answered 402.</p>
<table>
<thead><tr><th scope="col">Plan</th><th scope="col">Requests per day</th><th scope="col">Endpoints</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p>To change plans, contact the operator of this service. The <a href="${escapeHtml(cfg.baseUrl)}/docs">API documentation</a> lists every endpoint and its plan.</p>
<h2 id="terms">Terms</h2>
<p>The API and its documentation are proprietary; use requires an API key issued by the operator. The plan data is compiled from public CMS and HHS files and is provided as is, without warranty: verify enrollment decisions with HealthCare.gov or your state's marketplace.</p>
</body>
</html>
`;
}

export function pages(cfg: PagesConfig): Page[] {
  const swagger = Object.entries(SWAGGER_FILES).map(
    ([file, contentType]): Page => ({
      pattern: `${SWAGGER_ASSETS}/${file}`,
      contentType,
      cacheControl: IMMUTABLE,
      body: once(() => readFileSync(join(SWAGGER_DIR, file))),
    }),
  );
  return [
    { pattern: '/', contentType: 'application/json', cacheControl: NO_CACHE, body: once(() => JSON.stringify(indexBody(cfg))) },
    { pattern: '/docs', contentType: HTML, cacheControl: NO_CACHE, csp: DOCS_CSP, body: once(() => DOCS_HTML) },
    { pattern: '/docs/init.js', contentType: 'text/javascript; charset=utf-8', cacheControl: NO_CACHE, body: once(() => DOCS_INIT) },
    // Limits can be changed by configuration only at a restart, so the page is made once.
    { pattern: '/pricing', contentType: HTML, cacheControl: NO_CACHE, csp: STATIC_CSP, body: once(() => pricingHtml(cfg)) },
    ...swagger,
  ];
}
