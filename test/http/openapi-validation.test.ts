/**
 * The served OpenAPI document and the server cannot drift apart: a maintained validator
 * (openapi-backend, the request and response validation a gateway or a contract test would run) judges
 * real requests and real responses of a real server on port 0 against `/v1/openapi.json` as served.
 *
 * - Every request the server accepts (any answer but a 400) must validate: a validating gateway in
 *   front must never refuse what the server takes (`ids=A,B`, `income`, `/zip/{zip}`
 *   and HEAD were all refused).
 * - Every response, problems included, must validate against the response its status declares, and
 *   its status must be declared.
 *
 * Requests: each operation's 200 example (its self link), the REST side of the REST/MCP case table, and
 * the accepted spellings a generated client would not send (comma lists, aliases, alias path, HEAD).
 * openapi-backend checks a definition against the OpenAPI 3.0 schema, so that check is off (`quick`):
 * the document is OpenAPI 3.1 (type arrays), which redocly lint checks in openapi-quality.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Document, OpenAPIBackend } from 'openapi-backend';
import { buildCrosswalkFixture } from '../helpers/crosswalk-fixture.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { BASE } from '../helpers/http-assert.ts';
import { CASES } from '../helpers/rest-mcp-case-table.ts';
import { type FixtureServer, startFixtureServer } from '../helpers/rest-server.ts';

const SILVER = '11111TX0010001-01';
const GULF = '22222TX0020001-01';

/** Accepted spellings beyond the generated client's: each must validate and get its documented answer. */
const SPELLINGS: ReadonlyArray<readonly [string, 'GET' | 'HEAD']> = [
  [`/v1/health/plans/compare?ids=${SILVER},${GULF}&zip=77002&age=40`, 'GET'],
  [`/v1/health/plans/compare?ids=${SILVER}&ids=${GULF}&zip=77002&age=40`, 'GET'],
  [`/v1/health/plans/compare?ids=${SILVER},${GULF}&ids=44444AK0040001-01&zip=77002&age=40`, 'GET'],
  ['/v1/health/plans/aptc-estimate?zip=77002&income=40000&household_size=3&ages=40,38,10', 'GET'],
  ['/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=2&ages=40&ages=38', 'GET'],
  ['/v1/health/plans?zip=77002&age=40&page_size=2&sort=premium&order=desc', 'GET'],
  [`/v1/health/zip/${FIXTURE_ZIPS.harris}`, 'GET'],
  [`/v1/health/zips/${FIXTURE_ZIPS.harris}`, 'HEAD'],
  ['/v1/health/plans?zip=77002&age=40', 'HEAD'],
  [`/v1/health/plans/${SILVER}`, 'HEAD'],
];

let dir: string;
let s: FixtureServer;
let api: OpenAPIBackend;
let doc: Document;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-openapi-validation-'));
  s = await startFixtureServer({ buildsRoot: await buildCrosswalkFixture(dir) });
  doc = (await (await s.get('/v1/openapi.json', { tier: null })).json()) as Document;
  api = new OpenAPIBackend({ definition: doc, quick: true, strict: false });
  await api.init();
});

after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Judged {
  readonly status: number;
  readonly problems: string[];
}

/** Sends the request, then has the validator judge it and its response; the problems found, in words. */
async function judge(pathAndQuery: string, method: 'GET' | 'HEAD', tier: 'free' | 'pro' | 'enterprise' = 'pro'): Promise<Judged> {
  const url = new URL(pathAndQuery, BASE);
  const req = { method: method.toLowerCase(), path: url.pathname, query: url.search.slice(1), headers: { authorization: 'Bearer x' } };
  const res = await s.get(pathAndQuery, { method, tier });
  const text = await res.text();
  const problems: string[] = [];
  const op = api.matchOperation(req);
  if (op === undefined) return { status: res.status, problems: [`${method} ${url.pathname} is not in the document`] };
  const request = api.validateRequest(req, op);
  if (res.status !== 400 && !request.valid) problems.push(`request refused by the document: ${JSON.stringify(request.errors)}`);
  const declared = (op.responses ?? {}) as Record<string, unknown>;
  if (declared[String(res.status)] === undefined) problems.push(`status ${res.status} is not declared`);
  else if (method === 'GET') {
    const response = api.validateResponse(JSON.parse(text), op, res.status);
    if (!response.valid) problems.push(`response ${res.status} violates the document: ${JSON.stringify(response.errors)}`);
  } else if (text !== '') problems.push('HEAD answered a body');
  return { status: res.status, problems };
}

describe('the served OpenAPI document accepts what the server accepts, and describes what it answers', () => {
  test("every operation's 200 example, requested by its self link", async () => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const example = (
        item?.get?.responses?.['200'] as { content?: Record<string, { example?: { _links?: { self?: { href: string } } } }> }
      )?.content?.['application/json']?.example;
      const self = example?._links?.self?.href;
      if (self === undefined) continue;
      const j = await judge(self.replace(BASE, ''), 'GET', 'enterprise');
      assert.equal(j.status, 200, `${path}: ${self}`);
      assert.deepEqual(j.problems, [], `${path}: ${self}`);
      checked++;
    }
    assert.ok(checked >= 8, `examples judged: ${checked}`);
  });

  test('the REST side of every REST/MCP case: request and response', async () => {
    const failures: string[] = [];
    for (const c of CASES) {
      const j = await judge(c.rest, 'GET', c.tier ?? 'pro');
      assert.equal(j.status, c.status, c.name);
      if (j.problems.length > 0) failures.push(`${c.name} (${c.rest}): ${j.problems.join('; ')}`);
    }
    assert.deepEqual(failures, []);
  });

  for (const [path, method] of SPELLINGS) {
    test(`${method} ${path}`, async () => {
      const j = await judge(path, method);
      assert.notEqual(j.status, 400, 'the server accepts it');
      assert.deepEqual(j.problems, []);
    });
  }
});
