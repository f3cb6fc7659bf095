/**
 * A worker thread that attaches to the years the test's thread opened (as a REST worker does) and
 * answers probes about what it sees, so a test can tell shared memory from a copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { YearImage } from '../../src/operations/data-registry.ts';
import { createFollowerRegistry } from '../../src/operations/live-registry.ts';
import { SUMMARY_JSON } from '../../src/operations/plan-catalog.ts';

export interface AttachProbe {
  readonly build: string;
  readonly planCount: number;
  readonly firstCents: number;
  readonly zip: string | null;
  readonly premium: number | null;
  readonly summaryPrefix: string;
}

const live = createFollowerRegistry((workerData as { years: YearImage[] }).years);
const probe = (): AttachProbe => {
  const yd = live.current().get(2025)!;
  const ds = yd.ds;
  const zip = ds.sampleZip();
  const loc = zip === null ? null : ds.resolveZip(zip)![0]!;
  const plan = ds.plan(ds.listPlan(loc!.listId, 0));
  return {
    build: ds.buildHash,
    planCount: ds.planCount,
    firstCents: ds.columns.entryCents[0]!,
    zip,
    premium: ds.premium(plan.standardComponentId, loc!.ratingArea, 40),
    summaryPrefix: yd.catalog.get(plan.index, '01')![SUMMARY_JSON].prefixBytes.toString('utf8'),
  };
};
parentPort!.on('message', (m: { type: 'probe' } | { type: 'follow'; years: YearImage[] } | { type: 'close' }) => {
  if (m.type === 'probe') parentPort!.postMessage(probe());
  else if (m.type === 'follow') {
    live.follow(m.years);
    parentPort!.postMessage(probe());
  } else {
    live.close();
    parentPort!.close();
  }
});
parentPort!.postMessage(probe());
