/**
 * The typed client: the checked-in types (clients/typescript/schema.d.ts) are not stale, the README's
 * openapi-fetch example compiles with the project's tsc against them, and it runs against a real
 * server (search, plan detail, and an APTC estimate whose `ages` go out in the repeated form).
 *
 * Staleness without generating anything: the types' header records the sha256 of the OpenAPI contract
 * they were generated from (the document without examples, build hash, servers and licence URL:
 * src/http/openapi-contract.ts), compared here with the contract of the document the server serves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { contractSha256 } from '../../src/http/openapi-contract.ts';
import { searchThenDetail } from '../../clients/typescript/example.ts';
import { startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCHEMA = join(ROOT, 'clients/typescript/schema.d.ts');

let s: FixtureServer;
before(async () => {
  s = await startFixtureServer();
});
after(() => s.close());

describe('typed client', () => {
  test('the checked-in types were generated from the contract of the served document', async () => {
    const recorded = /^\/\/ openapi-contract-sha256: ([0-9a-f]{64})$/m.exec(readFileSync(SCHEMA, 'utf8'))?.[1];
    assert.ok(recorded !== undefined, 'schema.d.ts records the sha256 of its contract');
    const doc = (await (await s.get('/v1/openapi.json', { tier: null })).json()) as Record<string, unknown>;
    assert.equal(recorded, contractSha256(doc), 'clients/typescript/schema.d.ts is stale: run `npm run client:types` and commit it');
    // The contract ignores what differs between builds and deployments, and nothing else.
    const other = { ...doc, servers: [{ url: 'https://elsewhere.example' }], info: { ...(doc.info as object), 'x-data-build': 'other' } };
    assert.equal(contractSha256(other), recorded);
    const changed = JSON.parse(JSON.stringify(doc).replace('"Search plans"', '"Search the plans"')) as Record<string, unknown>;
    assert.notEqual(contractSha256(changed), recorded);
  });

  test('the example compiles with the project tsc in strict mode, library types checked', { timeout: 120_000 }, async () => {
    const tsc = join(ROOT, 'node_modules/.bin/tsc');
    const args = [
      '--ignoreConfig',
      '--noEmit',
      '--strict',
      '--target',
      'es2023',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--allowImportingTsExtensions',
      '--types',
      'node',
      'clients/typescript/example.ts',
    ];
    const run = await promisify(execFile)(tsc, args, { cwd: ROOT }).catch(
      (err: { stdout?: string; stderr?: string; code?: number }) => err,
    );
    assert.ok(!('code' in run) || run.code === undefined || run.code === 0, `${run.stdout ?? ''}${run.stderr ?? ''}`);
  });

  test('the example runs against a real server: search, plan detail, APTC with a list parameter', async () => {
    const result = await searchThenDetail(s.url, s.keys.pro, '77002');
    assert.equal(result.detail.metal_level, 'silver');
    assert.equal(result.detail.plan_year, 2025);
    assert.match(result.detail.id, /^\d{5}TX\d{7}-\d{2}$/);
    const comma = (await (
      await s.get('/v1/health/plans/aptc-estimate?zip=77002&household_income=45000&household_size=2&ages=40,38')
    ).json()) as { aptc_amount: number };
    assert.equal(result.monthlyCredit, comma.aptc_amount);
  });
});
