/**
 * @module A contract suite generated from the served OpenAPI document passes against the server that
 * serves it. Portman (openapi-to-postman, then newman) turns `/v1/openapi.json` of a real server on port
 * 0 (the fixture build with a crosswalk, so every operation has a 200) into one request per operation
 * and method, with its contract tests: a 2xx status, the JSON content type, a JSON body and that body
 * valid against the declared schema (GET; HEAD: the 2xx status).
 *
 * No value is set by hand. Each request sends the parameters the document gives an example for, with
 * that example: the required ones (Portman's default), and the optional ones that are part of the
 * build's example request (`age`, `household_income`…: a caller must give `age` or `ages`, which
 * OpenAPI cannot say, so neither is `required`). Optional parameters without an example stay unsent, as
 * a generator cannot invent valid values for them. The API key is the one credential given.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { buildCrosswalkFixture } from '../helpers/crosswalk-fixture.ts';
import { REPO_ROOT } from '../helpers/build-real-year.ts';
import { type FixtureServer, startFixtureServer } from '../helpers/rest-server.ts';

const PORTMAN = join(REPO_ROOT, 'node_modules/@apideck/portman/bin/portman');

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly example?: unknown;
}
interface OpenApiOperation {
  readonly operationId: string;
  readonly parameters?: readonly Parameter[];
}
interface OpenApiDocument {
  readonly paths: Record<string, Record<string, OpenApiOperation>>;
}

/** newman's JSON report, the parts read here. */
interface NewmanReport {
  readonly run: {
    readonly stats: Record<'requests' | 'assertions' | 'testScripts', { total: number; failed: number }>;
    readonly failures: ReadonlyArray<{ error: { message: string; test?: string }; source?: { name?: string } }>;
    readonly executions: ReadonlyArray<{
      item: { name: string };
      request: { method: string; url: { path: string[] } };
      response?: { code: number };
      assertions?: ReadonlyArray<{ assertion: string }>;
    }>;
  };
}

let dir: string;
let s: FixtureServer;
let doc: OpenApiDocument;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-portman-'));
  s = await startFixtureServer({ buildsRoot: await buildCrosswalkFixture(join(dir, 'fixture')) });
  doc = (await (await s.get('/v1/openapi.json', { tier: null })).json()) as OpenApiDocument;
});

after(async () => {
  await s?.close();
  if (process.env.KEEP_PORTMAN !== '1') rmSync(dir, { recursive: true, force: true });
});

/** Portman's settings: its default contract tests split by method, and the example parameters switched on. */
function portmanConfig(d: OpenApiDocument): Record<string, unknown> {
  const getTests = ['statusSuccess', 'contentType', 'jsonBody', 'schemaValidation'];
  const overwrites: unknown[] = [];
  for (const item of Object.values(d.paths)) {
    for (const op of Object.values(item)) {
      const withExample = (op.parameters ?? []).filter((p) => p.in === 'query' && p.required !== true && p.example !== undefined);
      if (withExample.length === 0) continue;
      overwrites.push({
        openApiOperationId: op.operationId,
        // A list example is one query parameter per item (form, explode): each is switched on.
        overwriteRequestQueryParams: withExample.flatMap((p) =>
          (Array.isArray(p.example) ? p.example : [p.example]).map(() => ({ key: p.name, disable: false })),
        ),
      });
    }
  }
  return {
    version: 1.0,
    tests: {
      contractTests: [
        ...getTests.map((t) => ({ openApiOperation: 'GET::*', [t]: { enabled: true } })),
        { openApiOperation: 'HEAD::*', statusSuccess: { enabled: true } },
      ],
    },
    overwrites,
  };
}

test('the suite Portman generates from /v1/openapi.json passes: every operation, GET and HEAD, answers as documented', {
  timeout: 240_000,
}, async () => {
  const files = {
    doc: join(dir, 'openapi.json'),
    portman: join(dir, 'portman-config.json'),
    postman: join(dir, 'postman-config.json'),
    collection: join(dir, 'collection.json'),
    report: join(dir, 'newman-report.json'),
  };
  writeFileSync(files.doc, JSON.stringify(doc));
  writeFileSync(files.portman, JSON.stringify(portmanConfig(doc)));
  // Portman's own defaults, written out so that a change of them in a later Portman does not change the suite.
  writeFileSync(
    files.postman,
    JSON.stringify({
      folderStrategy: 'Tags',
      parametersResolution: 'Example',
      requestParametersResolution: 'Example',
      exampleParametersResolution: 'Example',
      keepImplicitHeaders: true,
      enableOptionalParameters: false,
    }),
  );
  const newman = {
    envVar: [{ key: 'bearerToken', value: s.keys.enterprise }],
    bail: false,
    reporters: ['json'],
    reporter: { json: { export: files.report } },
  };
  let output = '';
  try {
    const r = await promisify(execFile)(
      process.execPath,
      [
        PORTMAN,
        '--local',
        files.doc,
        '--baseUrl',
        s.url,
        '--output',
        files.collection,
        '--portmanConfigFile',
        files.portman,
        '--postmanConfigFile',
        files.postman,
        '--runNewman',
        '--newmanRunOptions',
        JSON.stringify(newman),
      ],
      // Portman writes its working files under ./tmp of its working directory.
      { cwd: dir, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    output = `${r.stdout}\n${r.stderr}`;
  } catch (err) {
    output = String((err as { stdout?: string }).stdout ?? err);
  }
  assert.ok(existsSync(files.report), `newman wrote no report:\n${output.slice(-4000)}`);
  const report = JSON.parse(readFileSync(files.report, 'utf8')) as NewmanReport;
  const failures = report.run.failures.map((f) => `${f.source?.name ?? '?'}: ${f.error.test ?? ''} ${f.error.message}`);
  assert.deepEqual(failures, [], output.slice(-4000));

  // Every operation of the document, GET and HEAD, was requested, and got a 2xx.
  const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  assert.equal(report.run.stats.requests.total, operations);
  assert.ok(operations >= 28, `${operations} operations`);
  const statuses = report.run.executions.map((e) => `${e.request.method} /${e.request.url.path.join('/')}: ${e.response?.code}`);
  assert.ok(
    report.run.executions.every((e) => e.response !== undefined && e.response.code >= 200 && e.response.code < 300),
    statuses.join('\n'),
  );
  // Four contract assertions on each GET (status, content type, JSON body, schema), the status on each HEAD.
  for (const e of report.run.executions) {
    const checks = (e.assertions ?? []).map((a) => a.assertion.replace(/^\[\w+\]::\S+ - /, ''));
    assert.deepEqual(
      checks,
      e.request.method === 'GET'
        ? ['Status code is 2xx', 'Content-Type is application/json', 'Response has JSON Body', 'Schema is valid']
        : ['Status code is 2xx'],
      `${e.request.method} ${e.item.name}`,
    );
  }
  assert.equal(report.run.stats.assertions.failed, 0);
});
