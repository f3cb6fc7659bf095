/**
 * @module How much a request's own CPU time grows when other work goes through the caches between
 * requests, as the kernel's does in a server (socket buffers, the body's copy) and a neighbour's does on
 * a shared machine. The whole REST handler of a route (authentication, quota, query, operation, page
 * writer, header block) runs in this process on the national build, over the load benchmark's URLs,
 * against a stand-in for uWS that records and discards what it is given. Between two requests the run
 * copies `traffic` bytes from a 64 MiB pool, each time from another place; that copy is timed alone
 * and taken off, so what remains is the handler's time under that traffic.
 *
 * A handler that touches little memory and little code per request keeps its time as the traffic
 * grows; one that touches more loses it to cache misses. The ceiling of the load benchmark touches
 * almost nothing of its own. On a machine with smaller or busier caches the same traffic costs more,
 * which is what this measures, on any machine, without hardware counters.
 *
 * Usage: npm run bench:cache-sensitivity [-- --traffic 0,262144,1048576 --reps 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, benchUsageError } from './lib/bench-args.ts';
import { ensureBuild } from './lib/suite.ts';
import { openRegistry } from '../src/operations/data-registry.ts';
import { buildWorkloads } from './lib/workloads.ts';
import { median } from './lib/util.ts';
import { createKey } from '../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../src/policy/lmdb-store.ts';
import { DailyQuota } from '../src/policy/quota.ts';
import { DEFAULT_DAILY_LIMITS } from '../src/policy/tiers.ts';
import { RestFront } from '../src/http/rest-front.ts';
import { buildRoutes, OperationPipeline } from '../src/http/rest-pipeline.ts';
import { ResponseCache } from '../src/http/response-cache.ts';
import type { CachedResponse } from '../src/http/rest-writers.ts';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../src/http/uws.ts';

const SCRIPT = 'bench:cache-sensitivity';
const args = benchArgs(
  SCRIPT,
  `Usage: npm run ${SCRIPT} [-- options]

The whole REST handler of search and APTC in one process, with other memory traffic between requests.

Options:
  --traffic LIST   bytes copied between two requests, comma-separated (default 0,262144,1048576)
  --reps N         alternated repetitions of each traffic level, medians reported (default 3)
  --requests N     requests per repetition (default 20000)
  --builds DIR     the builds folder (default: HPD_DATA_DIR or data/builds, the national build made when missing)`,
  { traffic: { type: 'string' }, reps: { type: 'string' }, requests: { type: 'string' }, builds: { type: 'string' } },
);
const count = (name: string, fallback: number): number => {
  const text = args[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) benchUsageError(SCRIPT, `--${name} must be a whole number ≥ 1, got ${String(text)}`);
  return n;
};
const POOL_BYTES = 64 << 20;
const traffics = ((args.traffic as string | undefined) ?? '0,262144,1048576').split(',').map((t) => {
  const n = Number(t);
  if (!Number.isInteger(n) || n < 0 || n > POOL_BYTES / 2)
    benchUsageError(SCRIPT, `--traffic takes byte counts from 0 to ${POOL_BYTES / 2}, got ${t}`);
  return n;
});
const reps = count('reps', 3);
const requests = count('requests', 20_000);

const BASE_URL = 'http://127.0.0.1';
const YEAR = 2025;
const root = await ensureBuild(YEAR, args.builds as string | undefined, (line) => process.stderr.write(`${line}\n`));
const registry = openRegistry(root, BASE_URL, [YEAR]);
const yd = registry.get(YEAR)!;
const dir = mkdtempSync(join(tmpdir(), 'hpd-cache-sensitivity-'));
const store = openLmdbStateStore(join(dir, 'state'));
const quota = DailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, enterprise: Number.MAX_SAFE_INTEGER }, Date.now);
const key = (await createKey(store, { tier: 'enterprise', userId: 'bench', label: SCRIPT, now: Date.now() })).plaintext;

/**
 * uWS's response and request, as far as the REST handler uses them: what it writes is counted and
 * dropped, except while `recording`, when each body is kept by URL for the ceiling's handler.
 */
const written = { statuses: new Map<string, number>(), bytes: 0 };
let recording: Map<string, Buffer> | null = null;
const res = {
  onAborted: () => res,
  onWritable: () => res,
  cork(f: () => void) {
    f();
    return res;
  },
  writeStatus(status: string | Buffer) {
    const s = String(status);
    written.statuses.set(s, (written.statuses.get(s) ?? 0) + 1);
    return res;
  },
  writeHeader: (_name: string | Buffer, _value: string | Buffer) => res,
  tryEnd(body: Buffer): [boolean, boolean] {
    written.bytes += body.byteLength;
    recording?.set(`${current.path}?${current.query}`, Buffer.from(body));
    return [true, true];
  },
  end(body?: Buffer) {
    written.bytes += body?.byteLength ?? 0;
    return res;
  },
  endWithoutBody: () => res,
};
const headers = new Map<string, string>([
  ['authorization', `Bearer ${key}`],
  ['host', '127.0.0.1'],
  ['accept', '*/*'],
]);
let current = { path: '', query: '' };
const req = {
  getHeader: (name: string | Buffer) => headers.get(typeof name === 'string' ? name : name.toString('latin1')) ?? '',
  getUrl: () => current.path,
  getQuery: () => current.query,
  getParameter: () => '',
  getCaseSensitiveMethod: () => 'GET',
  getMethod: () => 'get',
  forEach: () => {},
};
const config = { registry, store, quota, baseUrl: BASE_URL, upgradeUrl: 'https://example.org/pricing', searchCacheBytes: 0 };
const front = new RestFront(config, {} as TemplatedApp, registry);
const pipeline = new OperationPipeline(front, config, {
  response: new ResponseCache<CachedResponse>(64 << 20),
  search: new ResponseCache<CachedResponse>(0, { lru: true }),
});
const routes = buildRoutes();

const pool = Buffer.alloc(POOL_BYTES, 1);
const sink = Buffer.alloc(POOL_BYTES / 2);
let offset = 0;
/** `bytes` copied from the next place in the pool (a stride no cache line of the last copies shares). */
function traffic(bytes: number): void {
  if (bytes === 0) return;
  if (offset + bytes > POOL_BYTES) offset = 0;
  pool.copy(sink, 0, offset, offset + bytes);
  offset += bytes + 4096;
}

/**
 * The load benchmark's ceiling (bench/ceiling/server.ts) against the same stand-in: one lookup of the
 * URL, the status line, the headers as strings (twelve, as ours sends) and the recorded body.
 */
const CEILING_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['x-request-id', '6f1c2a4e-8d3b-4c5a-9e7f-1a2b3c4d5e6f'],
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', 'ETag, Link, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset'],
  ['content-type', 'application/json'],
  ['etag', 'W/"0123456789ab-0123456789abcd.r1"'],
  ['cache-control', 'private, no-cache'],
  ['vary', 'Authorization'],
  ['ratelimit-limit', '100000'],
  ['ratelimit-remaining', '99999'],
  ['ratelimit-reset', '3600'],
  ['link', '<http://127.0.0.1/v1/health/plans?zip=77002&age=40>; rel="self"'],
  ['x-content-type-options', 'nosniff'],
];
function ceilingHandle(bodies: ReadonlyMap<string, Buffer>): void {
  const body = bodies.get(`${req.getUrl()}?${req.getQuery()}`)!;
  res.cork(() => {
    res.writeStatus('200 OK');
    for (const [k, v] of CEILING_HEADERS) res.writeHeader(k, v);
    res.end(body);
  });
}

const rows: string[] = [];
for (const name of ['search', 'aptc'] as const) {
  const w = buildWorkloads(yd, { registry, baseUrl: BASE_URL }, 400).find((x) => x.name === name)!;
  const urls = w.urls.map((u) => {
    const q = u.indexOf('?');
    return { path: u.slice(0, q), query: u.slice(q + 1) };
  });
  const route = routes.find((r) => r.pattern === urls[0]!.path);
  if (route === undefined) throw new Error(`no route for ${urls[0]!.path}`);
  const bodies = new Map<string, Buffer>();
  type Handler = 'ours' | 'ceiling' | 'none';
  const run = (n: number, bytes: number, handler: Handler): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      current = urls[i % urls.length]!;
      if (handler === 'ours') pipeline.handle(route, res as unknown as HttpResponse, req as unknown as HttpRequest, false);
      else if (handler === 'ceiling') ceilingHandle(bodies);
      traffic(bytes);
    }
    return ((performance.now() - t0) * 1000) / n;
  };
  written.statuses.clear();
  recording = bodies;
  run(urls.length, 0, 'ours');
  recording = null;
  run(urls.length * 20, 0, 'ours');
  run(urls.length * 20, 0, 'ceiling');
  const ours = new Map<number, number[]>(traffics.map((t) => [t, []]));
  const ceiling = new Map<number, number[]>(traffics.map((t) => [t, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const t of traffics) {
      const alone = run(requests, t, 'none');
      ours.get(t)!.push(run(requests, t, 'ours') - alone);
      ceiling.get(t)!.push(run(requests, t, 'ceiling') - alone);
    }
  }
  const ok = written.statuses.get('200 OK') ?? 0;
  const all = [...written.statuses.values()].reduce((a, b) => a + b, 0);
  if (ok !== all) throw new Error(`${name}: not every request answered 200: ${JSON.stringify([...written.statuses])}`);
  const oursBase = median(ours.get(traffics[0]!)!);
  const ceilingBase = median(ceiling.get(traffics[0]!)!);
  for (const t of traffics) {
    const o = median(ours.get(t)!);
    const c = median(ceiling.get(t)!);
    rows.push(
      `| ${name} | ${t.toLocaleString('en-US')} | ${o.toFixed(2)} | ${(o / oursBase).toFixed(2)}× | ${c.toFixed(2)} | ${(c / ceilingBase).toFixed(2)}× | ${(o - c).toFixed(2)} |`,
    );
  }
}

process.stdout.write(
  [
    `Per request, the handler alone (the copy between requests timed apart and taken off), ours' REST handler and the ceiling's (lookup, status, 12 headers, recorded body) against the same uWS stand-in; medians of ${reps} × ${requests.toLocaleString('en-US')} requests:`,
    '',
    `| workload | bytes copied between requests | ours µs a request | ÷ ours with ${traffics[0]!.toLocaleString('en-US')} | ceiling µs | ÷ ceiling with ${traffics[0]!.toLocaleString('en-US')} | ours − ceiling µs |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n'),
);
await quota.close();
await store.close();
registry.close();
rmSync(dir, { recursive: true, force: true });
