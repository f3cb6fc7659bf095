/**
 * @module Engine and operation micro-benchmarks (tinybench), in the harness process, before any server
 * starts: ZIP resolution, search (no filters, each filter, each sort, an offset and a keyset page deep
 * in the list), plan detail, compare of 4, OOP estimate per scenario, APTC for 1 and 5 members, and the
 * serializers of a 25-plan page. Operations run through `execute()` exactly as the REST front calls
 * them (tier enterprise); engine functions are timed alone where that separates engine from operation.
 */
import { Bench } from 'tinybench';
import { NO_LIST } from '../../src/engine/build-format.ts';
import { OOP_SCENARIOS, estimateOop } from '../../src/engine/oop.ts';
import { searchPlans } from '../../src/engine/search.ts';
import { estimateAptc } from '../../src/engine/subsidy.ts';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { writeSearchPage } from '../../src/http/search-page-writer.ts';
import { compileSerializer, fragmentSerializer } from '../../src/http/serializers.ts';
import { SearchPageModel } from '../../src/operations/search-page.ts';
import { comparePlansOperation } from '../../src/operations/compare-plans.ts';
import type { YearData } from '../../src/operations/data-registry.ts';
import { estimateAptcOperation } from '../../src/operations/estimate-aptc.ts';
import { estimateOutOfPocketOperation } from '../../src/operations/estimate-out-of-pocket.ts';
import { lookupZipOperation } from '../../src/operations/lookup-zip.ts';
import { type ExecuteResult, execute, executeToBody, type Operation, type OperationContext } from '../../src/operations/operation.ts';
import { threadScratch } from '../../src/operations/request-scratch.ts';
import { getPlanDetailsOperation } from '../../src/operations/get-plan-details.ts';
import { searchPlansOperation } from '../../src/operations/search-plans.ts';

export interface MicroResult {
  readonly group: string;
  readonly task: string;
  readonly ops_per_s: number;
  readonly median_us: number;
  readonly p99_us: number;
  readonly samples: number;
}

/** The ZIP with the longest plan list (Harris County TX in the national build), preferring 77002. */
function busiestZip(yd: YearData): string {
  const preferred = yd.ds.resolveZip('77002')?.[0];
  if (preferred !== undefined && preferred.listId !== NO_LIST) return '77002';
  let best = '';
  let size = -1;
  for (let z = 0; z < 100_000; z++) {
    const zip = String(z).padStart(5, '0');
    const l = yd.ds.resolveZip(zip)?.[0];
    if (l === undefined || l.listId === NO_LIST) continue;
    const n = yd.ds.listSize(l.listId);
    if (n > size) [best, size] = [zip, n];
  }
  return best;
}

export async function runMicro(yd: YearData, ctx: OperationContext, timeMs: number): Promise<MicroResult[]> {
  const zip = busiestZip(yd);
  const loc = yd.ds.resolveZip(zip)![0]!;
  const size = yd.ds.listSize(loc.listId);
  const planAt = (k: number) => yd.ds.plan(yd.ds.listPlan(loc.listId, k));
  const firstIds = Array.from({ length: Math.min(4, size) }, (_, k) => `${planAt(k).standardComponentId}-01`);
  const issuerWord = (
    planAt(0)
      .issuer.split(/[^A-Za-z]+/)
      .find((w) => w.length >= 4) ?? planAt(0).issuer
  ).toLowerCase();
  const age = 40;
  const scratch = threadScratch();
  const q = (s: string): Array<readonly [string, string]> => [...new URLSearchParams(s)];
  /** A task running `o` as the REST front does, in a borrow of the scratch; `written` runs inside it too. */
  const op = <P>(o: Operation<P>, query: string, path: Record<string, string> = {}, written?: (r: ExecuteResult) => void) => {
    const parsed = q(query);
    const check = executeToBody(o, ctx, 'enterprise', parsed, path, scratch);
    if (!check.ok) throw new Error(`micro-benchmark ${o.id}?${query} failed: ${JSON.stringify(check.problem)}`);
    return () => {
      scratch.borrow();
      try {
        const r = execute(o, ctx, 'enterprise', parsed, path, scratch);
        written?.(r);
        return r.ok;
      } finally {
        scratch.release();
      }
    };
  };
  const base = `zip=${zip}&age=${age}`;
  // A keyset page deep in the list: follow next_cursor four times (page 5 of 10).
  let cursorQuery = `${base}&per_page=10`;
  for (let i = 0; i < 4; i++) {
    const r = executeToBody(searchPlansOperation, ctx, 'enterprise', q(cursorQuery), {}, scratch);
    if (!r.ok || typeof r.body.next_cursor !== 'string') break;
    cursorQuery = `${base}&per_page=10&cursor=${r.body.next_cursor}`;
  }
  const engineQuery = {
    listId: loc.listId,
    age,
    sortBy: 'premium' as const,
    descending: false,
    filters: { includeCatastrophic: false },
    csr: null,
    pageSize: 25,
    page: 1,
  };
  const rec = yd.ds.planRecord(firstIds[0]!)!;
  const premium = yd.ds.premium(rec.standard_component_id, loc.ratingArea, age)!;
  const page = executeToBody(searchPlansOperation, ctx, 'enterprise', q(`${base}&per_page=25`), {}, scratch);
  if (!page.ok) throw new Error('search failed');
  const pageBody = page.body;
  const served = op(searchPlansOperation, `${base}&per_page=25`, {}, (r) => {
    if (r.ok && r.model instanceof SearchPageModel) writeSearchPage(r.model, pageBytes, pageLink, 'http://x/v1/openapi.json');
  });
  const pageBytes = new ByteWriter();
  const pageLink = new ByteWriter();
  const fjs = compileSerializer(searchPlansOperation.responseSchema);
  const fragments = fragmentSerializer((b) => JSON.stringify(b));
  const detailFjs = compileSerializer(getPlanDetailsOperation.responseSchema);
  const detail = executeToBody(getPlanDetailsOperation, ctx, 'enterprise', [], { plan_id: firstIds[0]! }, scratch);
  if (!detail.ok) throw new Error('detail failed');

  const tasks: Array<[group: string, task: string, fn: () => unknown]> = [
    ['zip', `engine resolveZip(${zip})`, () => yd.ds.resolveZip(zip)],
    ['zip', 'operation lookupZip', op(lookupZipOperation, '', { zip })],
    ['search', `engine searchPlans, ${size} plans, page 1 of 25`, () => searchPlans(yd.ds, engineQuery)],
    ['search', 'no filters', op(searchPlansOperation, base)],
    ['search', 'metal_level=silver', op(searchPlansOperation, `${base}&metal_level=silver`)],
    ['search', 'plan_type=hmo', op(searchPlansOperation, `${base}&plan_type=hmo`)],
    ['search', `issuer=${issuerWord}`, op(searchPlansOperation, `${base}&issuer=${encodeURIComponent(issuerWord)}`)],
    ['search', 'hsa_eligible=true', op(searchPlansOperation, `${base}&hsa_eligible=true`)],
    ['search', 'max_premium=500', op(searchPlansOperation, `${base}&max_premium=500`)],
    ['search', 'max_deductible=3000', op(searchPlansOperation, `${base}&max_deductible=3000`)],
    ['search', 'income + household_size (APTC, CSR variants)', op(searchPlansOperation, `${base}&income=30000&household_size=1`)],
    ['search', 'sort_by=premium desc', op(searchPlansOperation, `${base}&sort_order=desc`)],
    ['search', 'sort_by=deductible', op(searchPlansOperation, `${base}&sort_by=deductible`)],
    ['search', 'sort_by=deductible desc', op(searchPlansOperation, `${base}&sort_by=deductible&sort_order=desc`)],
    ['search', 'sort_by=max_oop', op(searchPlansOperation, `${base}&sort_by=max_oop`)],
    ['search', 'sort_by=name', op(searchPlansOperation, `${base}&sort_by=name`)],
    [
      'search',
      'sort_by=deductible with CSR (re-sort)',
      op(searchPlansOperation, `${base}&sort_by=deductible&income=30000&household_size=1`),
    ],
    ['search', 'offset page 5 of 10', op(searchPlansOperation, `${base}&per_page=10&page=5`)],
    ['search', 'keyset cursor page 5 of 10', op(searchPlansOperation, cursorQuery)],
    ['detail', 'engine planRecord (LMDB + msgpack)', () => yd.ds.planRecord(firstIds[0]!)],
    ['detail', 'operation getPlanById', op(getPlanDetailsOperation, '', { plan_id: firstIds[0]! })],
    ['compare', `compare ${firstIds.length} plans`, op(comparePlansOperation, `ids=${firstIds.join(',')}&zip=${zip}&age=${age}`)],
    ...OOP_SCENARIOS.map((s): [string, string, () => unknown] => [
      'oop',
      `engine estimateOop ${s}`,
      () => estimateOop(rec, premium, s, yd.rules),
    ]),
    ...OOP_SCENARIOS.map((s): [string, string, () => unknown] => [
      'oop',
      `operation ${s}`,
      op(estimateOutOfPocketOperation, `zip=${zip}&age=${age}&scenario=${s}`, { plan_id: firstIds[0]! }),
    ]),
    ['aptc', 'engine estimateAptc, 1 member', () => estimateAptc(yd.ds, yd.rules, loc, { income: 30_000, householdSize: 1, ages: [age] })],
    [
      'aptc',
      'engine estimateAptc, 5 members',
      () => estimateAptc(yd.ds, yd.rules, loc, { income: 60_000, householdSize: 5, ages: [44, 42, 16, 12, 8] }),
    ],
    ['aptc', 'operation, 1 member', op(estimateAptcOperation, `zip=${zip}&household_income=30000&household_size=1&ages=${age}`)],
    ['aptc', 'operation, 5 members', op(estimateAptcOperation, `zip=${zip}&household_income=60000&household_size=5&ages=44,42,16,12,8`)],
    ['serialize', '25-plan page: fast-json-stringify', () => fjs(pageBody)],
    ['serialize', '25-plan page: JSON.stringify', () => JSON.stringify(pageBody)],
    ['serialize', '25-plan page: pre-serialized fragments', () => fragments(pageBody)],
    ['serialize', '25-plan page: search + page model written as bytes (served)', served],
    ['serialize', 'plan detail: fast-json-stringify (served)', () => detailFjs(detail.body)],
  ];

  const bench = new Bench({ time: timeMs, warmupTime: Math.min(250, timeMs), iterations: timeMs >= 100 ? 64 : 8, throws: true });
  for (const [group, task, fn] of tasks) bench.add(`${group}\u0000${task}`, fn);
  await bench.run();
  return bench.tasks.map((t) => {
    const r = t.result as unknown as { latency: { p50: number; p99: number; samplesCount?: number }; throughput: { mean: number } };
    const [group, task] = t.name.split('\u0000') as [string, string];
    return {
      group,
      task,
      ops_per_s: Math.round(r.throughput.mean),
      median_us: +(r.latency.p50 * 1000).toFixed(2),
      p99_us: +(r.latency.p99 * 1000).toFixed(2),
      samples: r.latency.samplesCount ?? 0,
    };
  });
}
