/**
 * REST workers read the dataset once: the thread that opens a build shares its tables, derived columns
 * and plan catalog with worker threads, which attach without reading tables.bin again and see the very
 * same memory; a follower swaps to the builds the opener adopted and closes the ones it retired.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { currentHash } from '../../build/publish.ts';
import { createLiveRegistry, imagesOf } from '../../src/operations/live-registry.ts';
import { SUMMARY_JSON } from '../../src/operations/plan-catalog.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';
import type { AttachProbe } from '../helpers/attach-worker.ts';

const HOOKS = new URL('../../bin/register-typescript.js', import.meta.url).href;
const WORKER = new URL('../helpers/attach-worker.ts', import.meta.url);

test('a worker attaches to the opened build: same memory, no file read again, same answers; it follows swaps', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-follow-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = await buildFixture(dir);
  const a = currentHash(root, 2025)!;
  const live = createLiveRegistry(root, 'http://api.test', () => {});
  t.after(() => live.close());
  const yd = live.current().get(2025)!;

  // Without tables.bin, only an attach to the opener's memory can succeed.
  const tables = join(root, '2025', a, 'tables.bin');
  renameSync(tables, `${tables}.away`);
  const worker = new Worker(WORKER, { workerData: { years: imagesOf(live.current()) }, execArgv: ['--import', HOOKS] });
  t.after(() => worker.postMessage({ type: 'close' }));
  const [first] = (await once(worker, 'message')) as [AttachProbe];
  renameSync(`${tables}.away`, tables);

  const zip = yd.ds.sampleZip()!;
  const loc = yd.ds.resolveZip(zip)![0]!;
  const plan = yd.ds.plan(yd.ds.listPlan(loc.listId, 0));
  assert.deepEqual(first, {
    build: a,
    planCount: yd.ds.planCount,
    firstCents: yd.ds.columns.entryCents[0]!,
    zip,
    premium: yd.ds.premium(plan.standardComponentId, loc.ratingArea, 40),
    summaryPrefix: yd.catalog.get(plan.index, '01')![SUMMARY_JSON].prefixBytes.toString('utf8'),
  });

  // A write by this thread is seen by the worker: one copy, not two.
  const cents = yd.ds.columns.entryCents;
  const was = cents[0]!;
  cents[0] = was + 1;
  worker.postMessage({ type: 'probe' });
  const [seen] = (await once(worker, 'message')) as [AttachProbe];
  cents[0] = was;
  assert.equal(seen.firstCents, was + 1);

  const b = await buildFixtureVariant(dir, root, '2024-12-01');
  assert.deepEqual(live.reload().adopted, [{ year: 2025, from: a, to: b }]);
  worker.postMessage({ type: 'follow', years: imagesOf(live.current()) });
  const [followed] = (await once(worker, 'message')) as [AttachProbe];
  assert.equal(followed.build, b);
  worker.postMessage({ type: 'follow', years: imagesOf(live.current()) });
  const [again] = (await once(worker, 'message')) as [AttachProbe];
  assert.equal(again.build, b, 'following the same builds again changes nothing');
});
