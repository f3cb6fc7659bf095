/**
 * What an integrator gets from /v1/openapi.json: named component schemas behind `$ref`s, tags, a
 * description on every parameter, examples that are the bytes the server really sends, and a document
 * that `redocly lint` (recommended rules) accepts. Lint runs the locally installed CLI on the document
 * served by a real server: nothing is downloaded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PACKAGE_VERSION } from '../../src/package-version.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { BASE } from '../helpers/http-assert.ts';
import { startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  style?: string;
  explode?: boolean;
  example?: unknown;
  allowEmptyValue?: boolean;
}
interface MediaType {
  schema: Record<string, unknown>;
  example?: unknown;
}
interface Response {
  content?: Record<string, MediaType>;
}
interface Doc {
  info: { version: string; license?: { name: string; url: string }; 'x-data-build'?: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<
    string,
    {
      get: {
        tags: string[];
        parameters: Parameter[];
        responses: Record<string, Response & { headers?: Record<string, { schema: Record<string, unknown> }> }>;
      };
    }
  >;
  components: { schemas: Record<string, unknown> };
}

let s: FixtureServer;
let doc: Doc;
let text: string;
before(async () => {
  s = await startFixtureServer();
  text = await (await s.get('/v1/openapi.json', { tier: null })).text();
  doc = JSON.parse(text) as Doc;
});
after(() => s.close());

describe('OpenAPI document quality', () => {
  test('info.version is the API version, the build hash is in x-data-build, and there is a licence', () => {
    assert.equal(doc.info.version, PACKAGE_VERSION);
    assert.equal(doc.info['x-data-build'], s.registry.version);
    assert.ok(doc.info.license?.name && doc.info.license.url);
  });

  test('every resource is a named component schema and responses refer to it', () => {
    const names = [
      'PlanSummary',
      'PlanDetail',
      'SearchCollection',
      'Comparison',
      'OopEstimate',
      'AptcEstimate',
      'Crosswalk',
      'ZipLookup',
      'Years',
      'Issuers',
      'Problem',
      'HalLink',
      'Location',
    ];
    for (const n of names) assert.ok(doc.components.schemas[n], n);
    const expected: Record<string, string> = {
      '/v1/health/plans': 'SearchCollection',
      '/v1/health/plans/compare': 'Comparison',
      '/v1/health/plans/aptc-estimate': 'AptcEstimate',
      '/v1/health/plans/crosswalk': 'Crosswalk',
      '/v1/health/plans/{plan_id}/oop-estimate': 'OopEstimate',
      '/v1/health/plans/{plan_id}': 'PlanDetail',
      '/v1/health/zips/{zip}': 'ZipLookup',
      '/v1/health/years': 'Years',
      '/v1/health/issuers': 'Issuers',
    };
    for (const [path, name] of Object.entries(expected)) {
      const responses = doc.paths[path]!.get.responses;
      assert.deepEqual(responses['200']!.content!['application/json']!.schema, { $ref: `#/components/schemas/${name}` }, path);
      assert.deepEqual(responses['400']!.content!['application/problem+json']!.schema, { $ref: '#/components/schemas/Problem' }, path);
    }
    // Plan summaries inside collections are references too, not copies.
    assert.match(JSON.stringify(doc.components.schemas.SearchCollection), /"items":\{"\$ref":"#\/components\/schemas\/PlanSummary"\}/);
    assert.equal(
      (text.match(/"hsa_eligible":\{"type":"boolean","description":"[^"]*"\},"national_network"/g) ?? []).length,
      2,
      'PlanSummary and PlanDetail defined once each',
    );
  });

  test('every operation is tagged with a described tag and every parameter is described; lists say both forms are accepted', () => {
    const tags = new Set(doc.tags.map((t) => t.name));
    for (const t of doc.tags) assert.ok(t.description.length > 0, t.name);
    for (const [path, item] of Object.entries(doc.paths)) {
      assert.ok(item.get.tags.length > 0 && item.get.tags.every((t) => tags.has(t)), path);
      for (const p of item.get.parameters) assert.ok((p.description ?? '').length > 0, `${path} ${p.name} described`);
    }
    for (const [path, name] of [
      ['/v1/health/plans/aptc-estimate', 'ages'],
      ['/v1/health/plans/compare', 'ids'],
    ] as const) {
      const p = doc.paths[path]!.get.parameters.find((x) => x.name === name)!;
      assert.equal(p.style, 'form');
      assert.equal(p.explode, true);
      assert.match(p.description!, new RegExp(`${name}=a&${name}=b.*comma-separated list \\(\`${name}=a,b\`\\)`));
    }
  });

  test('every response with a body has an example, and each 200 example is byte for byte the response its self link gets', async () => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [status, r] of Object.entries(item.get.responses)) {
        for (const [type, media] of Object.entries(r.content ?? {})) {
          // The default fixture loads no crosswalk: its 200 (and the 404 of a source year) cannot be made.
          if (path === '/v1/health/plans/crosswalk' && (status === '200' || status === '404')) continue;
          assert.notEqual(media.example, undefined, `${path} ${status} ${type} example`);
        }
      }
      const ok = item.get.responses['200']!.content!['application/json']!.example as { _links: { self: { href: string } } } | undefined;
      if (ok === undefined) continue;
      const res = await s.get(ok._links.self.href.replace(BASE, ''), { tier: 'enterprise' });
      assert.equal(res.status, 200, path);
      assert.equal(await res.text(), JSON.stringify(ok), `${path}: the example is the served body`);
      checked++;
    }
    // Every path but the crosswalk's (no crosswalk in the fixture), alias paths included.
    assert.equal(checked, OPERATIONS.reduce((n, op) => n + 1 + (op.aliasPaths?.length ?? 0), 0) - 1);
  });

  test('the parameter examples of each operation are together the request of its 200 example, required ones included', async () => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const ok = item.get.responses['200']!.content!['application/json']!.example as { _links: { self: { href: string } } } | undefined;
      if (ok === undefined) continue;
      const params = item.get.parameters;
      for (const p of params) if (p.required === true) assert.notEqual(p.example, undefined, `${path}: required ${p.name} has an example`);
      let target = path;
      const query = new URLSearchParams();
      for (const p of params.filter((x) => x.example !== undefined)) {
        if (p.in === 'path') target = target.replace(`{${p.name}}`, String(p.example));
        else for (const v of Array.isArray(p.example) ? p.example : [p.example]) query.append(p.name, String(v));
      }
      const q = query.toString();
      const res = await s.get(`${target}${q === '' ? '' : `?${q}`}`, { tier: 'enterprise' });
      assert.equal(res.status, 200, `${target}?${q}`);
      // The same resource as the example: the self link names the same request (parameter order aside).
      const self = new URL(((await res.json()) as { _links: { self: { href: string } } })._links.self.href);
      const want = new URL(ok._links.self.href);
      assert.equal(self.pathname, want.pathname, path);
      assert.deepEqual([...self.searchParams].sort(), [...want.searchParams].sort(), path);
      checked++;
    }
    assert.ok(checked >= 12, `${checked} operations`);
  });

  test('optional query parameters allow an empty value, which the server takes as absent', async () => {
    for (const op of OPERATIONS) {
      const required = new Set((op.query.spec.schema.required ?? []) as string[]);
      for (const p of doc.paths[op.path]!.get.parameters) {
        const canonical = op.query.spec.aliases?.[p.name] ?? p.name;
        const optional = p.in === 'query' && !required.has(canonical);
        assert.equal(p.allowEmptyValue === true, optional, `${op.path} ${p.name}`);
      }
    }
    const plain = await s.get('/v1/health/plans?zip=99501&age=40', { tier: 'enterprise' });
    const empties = await s.get('/v1/health/plans?zip=99501&age=40&county_fips=&metal_level=&issuer=&year=&cursor=', {
      tier: 'enterprise',
    });
    assert.equal(empties.status, 200);
    assert.equal(((await empties.json()) as { total: number }).total, ((await plain.json()) as { total: number }).total);
  });

  test("X-Request-Id is declared as what the server sends: the caller's safe id, echoed, or a UUID", async () => {
    const declared = doc.paths['/v1/health/plans']!.get.responses['200']!.headers!['X-Request-Id']!.schema;
    assert.equal(declared.format, undefined);
    const pattern = new RegExp(declared.pattern as string);
    const echoed = await s.get('/v1/health/plans?zip=99501&age=40', { tier: 'enterprise', headers: { 'x-request-id': 'gw:trace-42.a_b' } });
    assert.equal(echoed.headers.get('x-request-id'), 'gw:trace-42.a_b');
    const made = await s.get('/v1/health/plans?zip=99501&age=40', { tier: 'enterprise' });
    for (const id of [echoed.headers.get('x-request-id')!, made.headers.get('x-request-id')!]) assert.match(id, pattern);
  });

  test('redocly lint with its recommended rules passes on the served document', { timeout: 60_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-lint-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, text);
    // No telemetry and no update check: the lint must not reach the network.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const run = await promisify(execFile)(REDOCLY, ['lint', '--extends=recommended', '--format=stylish', file], { env, cwd: dir }).catch(
      (err: { stdout?: string; stderr?: string; code?: number }) => err,
    );
    const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    assert.ok(!('code' in run) || run.code === undefined || run.code === 0, out);
    // On Node 20 redocly first prints a boxed runtime deprecation notice: the report is what follows it.
    const report = out.slice(out.indexOf('validating'));
    assert.match(report, /Your API description is valid/, out);
    assert.doesNotMatch(report, /warning|error/i, out);
    t.diagnostic(
      report
        .split('\n')
        .filter((l) => l.trim() !== '')
        .join(' | '),
    );
  });
});
