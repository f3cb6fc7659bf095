/**
 * @module `node --import ./bin/register-typescript.js bench/compression.bench.ts [--builds DIR]`: what
 * compressing a response costs (CPU µs, tinybench median) against the bytes it saves, on real pages
 * of the national build: 50 search pages of the bench workload (~17 KB each) and 50 plan details,
 * brotli quality 1–4 (and 9, 11 for bytes precompressed once) and gzip level 1–6 (and 9).
 *
 * It decides two things (src/http/compression.ts): cached immutable responses are compressed once, at a
 * high setting, when first cached; computed search pages are compressed only if a fast setting costs
 * little next to the ~50 µs a computed search takes.
 */
import { resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Bench } from 'tinybench';
import { fragmentSerializer, compileSerializer } from '../src/http/serializers.ts';
import { queryPairs } from '../src/encoding/query-string.ts';
import { openRegistry } from '../src/operations/data-registry.ts';
import { executeToBody } from '../src/operations/operation.ts';
import { threadScratch } from '../src/operations/request-scratch.ts';
import { getPlanDetailsOperation } from '../src/operations/get-plan-details.ts';
import { searchPlansOperation } from '../src/operations/search-plans.ts';
import { ensureBuild } from './lib/suite.ts';
import { buildWorkloads } from './lib/workloads.ts';

const argv = process.argv.slice(2);
const buildsArg = argv.indexOf('--builds') >= 0 ? argv[argv.indexOf('--builds') + 1] : undefined;
const BASE = 'https://api.bench.test';
const root = await ensureBuild(2025, buildsArg === undefined ? undefined : resolve(buildsArg), (l) =>
  process.stderr.write(`compression: ${l}\n`),
);
const registry = openRegistry(root, BASE, [2025]);
const ctx = { registry, baseUrl: BASE };
const workloads = buildWorkloads(registry.get(2025)!, ctx, 400);
const fragments = fragmentSerializer((b) => JSON.stringify(b));
const detail = compileSerializer(getPlanDetailsOperation.responseSchema);
const pagesOf = (name: 'search' | 'detail', serialize: (b: Record<string, unknown>) => string | Buffer): Buffer[] =>
  workloads
    .find((w) => w.name === name)!
    .urls.slice(0, 50)
    .map((u) => {
      const [path, query = ''] = u.split('?') as [string, string?];
      const op = name === 'search' ? searchPlansOperation : getPlanDetailsOperation;
      const params: Record<string, string> = name === 'detail' ? { plan_id: decodeURIComponent(path.split('/').pop()!) } : {};
      const r = executeToBody(op as never, ctx, 'enterprise', queryPairs(query), params, threadScratch());
      if (!r.ok) throw new Error(`${u}: ${JSON.stringify(r.problem)}`);
      return Buffer.from(serialize(r.body));
    });
const sets = { search: pagesOf('search', fragments), detail: pagesOf('detail', detail) };

const SETTINGS: Array<{ name: string; run: (b: Buffer) => Buffer }> = [
  ...[1, 2, 3, 4, 9, 11].map((q) => ({
    name: `brotli q${q}`,
    run: (b: Buffer) =>
      brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: q, [constants.BROTLI_PARAM_SIZE_HINT]: b.length } }),
  })),
  ...[1, 3, 6, 9].map((l) => ({ name: `gzip ${l}`, run: (b: Buffer) => gzipSync(b, { level: l }) })),
];

const rows: Array<Record<string, string | number>> = [];
for (const [set, pages] of Object.entries(sets)) {
  const identity = pages.reduce((n, p) => n + p.length, 0) / pages.length;
  const bench = new Bench({ time: Number(process.env.HPD_BENCH_MS ?? 400) });
  let i = 0;
  for (const s of SETTINGS) bench.add(s.name, () => s.run(pages[i++ % pages.length]!));
  await bench.run();
  for (const s of SETTINGS) {
    const t = bench.tasks.find((x) => x.name === s.name)!.result as unknown as { latency: { p50: number } };
    const out = pages.reduce((n, p) => n + s.run(p).length, 0) / pages.length;
    rows.push({
      set,
      setting: s.name,
      'identity B': Math.round(identity),
      'encoded B': Math.round(out),
      'saved %': +(100 * (1 - out / identity)).toFixed(1),
      'median µs': +(t.latency.p50 * 1000).toFixed(1),
    });
  }
}
console.table(rows);
registry.close();
