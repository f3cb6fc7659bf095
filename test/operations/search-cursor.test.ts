/**
 * A search cursor replayed where it does not belong says which of its request's parts differs, so the
 * caller knows whether repeating the original request can help: another plan year
 * (send that year), another build of the same year (it cannot: start again), or other filters. The
 * builds are real: a 2026 build beside the 2025 one, and a second 2025 build adopted by a reload.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createLiveRegistry, type LiveRegistry } from '../../src/operations/live-registry.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { executeToBody, type BodyResult, type Operation } from '../../src/operations/operation.ts';
import { threadScratch } from '../../src/operations/request-scratch.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';

const search: Operation<never> = OPERATIONS.find((o) => o.path === '/v1/health/plans')!;

let dir: string;
let root: string;
let live: LiveRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-cursor-'));
  root = await buildFixture(dir, [2026]);
  live = createLiveRegistry(root, 'http://api.test', () => {});
});
after(() => {
  live?.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (query: string): BodyResult =>
  executeToBody(
    search,
    { registry: live.current(), baseUrl: 'http://api.test' },
    'pro',
    [...new URLSearchParams(query)],
    {},
    threadScratch(),
  );

/** The next_cursor of the first page of `query`, two plans a page. */
function cursorOf(query: string): string {
  const r = run(`${query}&per_page=2`);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.problem));
  assert.equal(typeof r.body.next_cursor, 'string');
  return r.body.next_cursor as string;
}

/** The `cursor` message and the detail of a replay refused. */
function refusal(query: string): { message: string; detail: string } {
  const r = run(`${query}&per_page=2`);
  assert.ok(!r.ok, 'refused');
  assert.deepEqual(
    r.problem.errors?.map((e) => e.field),
    ['cursor'],
  );
  return { message: r.problem.errors![0]!.message, detail: r.problem.detail };
}

test('a cursor of another plan year names the year it belongs to', () => {
  const cursor = cursorOf('zip=77002&age=40&year=2025');
  assert.ok(run(`zip=77002&age=40&year=2025&per_page=2&cursor=${cursor}`).ok, 'its own year pages on');
  const { message, detail } = refusal(`zip=77002&age=40&year=2026&cursor=${cursor}`);
  assert.equal(
    message,
    'Issued for plan year 2025, not 2026: send year=2025 with the parameters of the request that returned it, or drop it to start again',
  );
  assert.equal(detail, `Invalid cursor: ${message}.`);
});

test('a cursor of another query names the filters, not the year or the build', () => {
  const cursor = cursorOf('zip=77002&age=40&year=2025');
  assert.equal(
    refusal(`zip=77002&age=40&year=2025&metal_level=silver&cursor=${cursor}`).message,
    'Issued for another query (other filters or sort): send it with the parameters of the request that returned it, or drop it to start again',
  );
});

test('a cursor of a build replaced since says to start again, not to repeat the request', { timeout: 120_000 }, async () => {
  const cursor = cursorOf('zip=77002&age=40&year=2025');
  await buildFixtureVariant(dir, root, '2024-12-01');
  assert.equal(live.reload().adopted.length, 1, 'the new 2025 build is served');
  assert.equal(
    refusal(`zip=77002&age=40&year=2025&cursor=${cursor}`).message,
    'Issued by another build of the 2025 plan data (the data was updated since): drop it to start again from the first page',
  );
});

test('a cursor issued before cursors named their year and build still pages on, and is refused in the old words', () => {
  const cursor = cursorOf('zip=77002&age=40&year=2025');
  const { y, b, ...rest } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
  assert.deepEqual([y, typeof b], [2025, 'string'], 'a cursor names its year and build');
  const older = Buffer.from(JSON.stringify(rest)).toString('base64url');
  assert.ok(run(`zip=77002&age=40&year=2025&per_page=2&cursor=${older}`).ok, 'the same query pages on');
  assert.equal(
    refusal(`zip=77002&age=41&year=2025&cursor=${older}`).message,
    'Issued for another query (other filters, sort, year or data build): send it with the parameters of the request that returned it, or drop it to start again',
  );
});
