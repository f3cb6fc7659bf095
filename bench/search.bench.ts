/**
 * @module Search micro-benchmarks (tinybench) on the national build: the engine query alone and the
 * whole operation, and the two ways of serializing a 25-plan page side by side. Target (REST issue):
 * engine search for one location, per_page 25, ≤ 20 µs median.
 *
 * Builds the default PY2025 dataset first when there is none (`npm run bench:search`).
 */
import { Bench } from 'tinybench';
import { buildDataset } from '../build/compile.ts';
import { createProgress } from '../build/progress.ts';
import { buildsRoot, cacheRoot, REPO_ROOT } from '../src/cli/paths.ts';
import { compileSerializer, fragmentSerializer } from '../src/http/serializers.ts';
import { openRegistry, yearsWithBuilds } from '../src/operations/data-registry.ts';
import { execute, executeToBody } from '../src/operations/operation.ts';
import { threadScratch } from '../src/operations/request-scratch.ts';
import { searchPlansOperation } from '../src/operations/search-plans.ts';
import { searchPlans } from '../src/engine/search.ts';

const YEAR = 2025;
const root = buildsRoot();
if (!yearsWithBuilds(root).includes(YEAR)) {
  await buildDataset({
    year: YEAR,
    root: REPO_ROOT,
    buildsRoot: root,
    cacheDir: cacheRoot(),
    offline: true,
    progress: createProgress({ tty: false }),
  });
}
const registry = openRegistry(root, 'http://127.0.0.1:8080', [YEAR]);
const yd = registry.get(YEAR)!;
const ctx = { registry, baseUrl: 'http://127.0.0.1:8080' };
// Harris County TX (the largest plan list of the build) and a small Alaska list.
const harris = yd.ds.resolveZip('77002')![0]!;
const anchorage = yd.ds.resolveZip('99501')![0]!;
const filters = { includeCatastrophic: false };
const q = (listId: number, extra: Partial<Parameters<typeof searchPlans>[1]> = {}) => ({
  listId,
  age: 40,
  sortBy: 'premium' as const,
  descending: false,
  filters,
  csr: null,
  pageSize: 25,
  page: 1,
  ...extra,
});
const query = (s: string) => [...new URLSearchParams(s)];
const scratch = threadScratch();
const page = executeToBody(searchPlansOperation, ctx, 'pro', query('zip=77002&age=40&per_page=25'), {}, scratch);
if (!page.ok) throw new Error('search failed');
const fjs = compileSerializer(searchPlansOperation.responseSchema);
const fragments = fragmentSerializer((b) => JSON.stringify(b));
if (fragments(page.body).toString('utf8') !== JSON.stringify(page.body))
  throw new Error('fragment serializer output differs from JSON.stringify');

const bench = new Bench({ time: Number(process.env.HPD_BENCH_MS ?? 1000) });
bench
  .add(`engine search, Harris County TX (${yd.ds.listSize(harris.listId)} plans), page 1 of 25`, () => searchPlans(yd.ds, q(harris.listId)))
  .add('engine search, Harris, sort by deductible desc, page 3', () =>
    searchPlans(yd.ds, q(harris.listId, { sortBy: 'deductible', descending: true, page: 3 })),
  )
  .add('engine search, Harris, metal silver + max premium', () =>
    searchPlans(yd.ds, q(harris.listId, { filters: { includeCatastrophic: false, metalLevel: 'silver', maxPremium: 700 } })),
  )
  .add(`engine search, Anchorage AK (${yd.ds.listSize(anchorage.listId)} plans)`, () => searchPlans(yd.ds, q(anchorage.listId)))
  .add('operation: parse + validate + search + resource (25 plans)', () => {
    scratch.borrow();
    try {
      return execute(searchPlansOperation, ctx, 'pro', query('zip=77002&age=40&per_page=25'), {}, scratch);
    } finally {
      scratch.release();
    }
  })
  .add('serialize 25-plan page: fast-json-stringify', () => fjs(page.body))
  .add('serialize 25-plan page: JSON.stringify', () => JSON.stringify(page.body))
  .add('serialize 25-plan page: pre-serialized plan fragments', () => fragments(page.body));
await bench.run();

const rows = bench.tasks.map((t) => {
  const r = t.result as unknown as { latency: { p50: number; p99: number }; throughput: { mean: number } };
  return {
    task: t.name,
    'ops/s': Math.round(r.throughput.mean),
    'median µs': +(r.latency.p50 * 1000).toFixed(2),
    'p99 µs': +(r.latency.p99 * 1000).toFixed(2),
  };
});
console.table(rows);
const engine = rows[0]!['median µs'];
const [fj, js, fr] = rows.slice(-3).map((r) => r['median µs']) as [number, number, number];
console.log(`engine search median ${engine} µs (target ≤ 20 µs: ${engine <= 20 ? 'ok' : 'MISS'})`);
console.log(
  `serializing a 25-plan page, median: fast-json-stringify ${fj} µs, JSON.stringify ${js} µs, fragments ${fr} µs; fragments are ${(js / fr).toFixed(1)}× JSON.stringify and ${(fj / fr).toFixed(1)}× fast-json-stringify`,
);
registry.close();
