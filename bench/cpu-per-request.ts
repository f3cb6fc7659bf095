/**
 * @module `npm run bench:cpu -- [search|detail|years|aptc] [options]` (`--help` lists them): the CPU
 * one request costs, ours against the bare-uWS ceiling, alternated in one run.
 *
 * On a shared machine requests/s move with the neighbours' load, but the CPU time a pinned server
 * process consumes per request (user + system, from /proc) barely does: it is the figure to compare
 * two versions of the hot path by. Both servers run pinned to the same CPU at full load (64
 * connections); the ceiling replays our recorded bytes (bench/ceiling/server.ts), so ours ÷ ceiling in
 * CPU per request is the requests/s ratio a quiet machine would show. `--unique` makes ours' URL list
 * long (20,000 distinct requests) so that no response cache can help; the ceiling replays 2,000 of them.
 * Ours (and the checkout of `--against`) run under V8's GC trace, which gives the bytes they allocate per
 * request (bench/lib/gc-trace.ts).
 *
 * More options: `--against DIR` also measures `hpd serve` from another checkout (say a worktree of the
 * previous commit), alternated with ours on the same CPU, for an A/B that the machine's drift affects
 * alike; `--node-flags=FLAGS` passes V8/Node flags to ours only (e.g. `--node-flags=--max-semi-space-size=64`);
 * `--strace` adds two runs per server under strace (syscalls, socket sends and bytes per request,
 * bench/lib/syscall-profile.ts), `--perf` one under perf record (CPU per request by DSO and the kernel's
 * top symbols), `--perf-dir DIR` keeps the perf.data files. The output ends with the table "Per request,
 * what the kernel sees" (bench/lib/kernel-report.ts): every thread's CPU, context switches and
 * migrations per request from /proc around each timed run, and --strace's counts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import {
  benchServeEnv,
  childEnv,
  detectPinning,
  enterpriseKey,
  freePorts,
  spawnHpdServe,
  spawnServer,
  type ServerProcess,
} from './lib/processes.ts';
import { benchArgsWithChoice, benchUsageError } from './lib/bench-args.ts';
import { ensureBuild } from './lib/suite.ts';
import { searchCacheLookups } from './lib/cache-lookups.ts';
import { GcTrace } from './lib/gc-trace.ts';
import { kernelTable } from './lib/kernel-report.ts';
import { type PerRequestStats, perRequest, snapshot } from './lib/proc-stats.ts';
import { type NotProfiled, type SyscallProfile, syscallProfile } from './lib/syscall-profile.ts';
import { fetchResponse, mapLimit } from './lib/verify.ts';
import { buildWorkloads, WORKLOADS, type WorkloadName, withPerPage } from './lib/workloads.ts';
import { runWrk } from './lib/wrk.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const USAGE = `Usage: npm run bench:cpu -- [search|detail|years|aptc] [options]

CPU time per request of ours (hpd serve --workers 0) and of the bare-uWS ceiling, pinned to one core at
full load (64 connections), alternated; default workload search.

Options:
  --seconds N          seconds per run (default 4)
  --reps N             repetitions (default 3)
  --builds DIR         builds root holding <year>/current (default: data/builds, built when missing)
  --unique             20,000 distinct URLs (no response cache can help)
  --zipf S             a 400,000-request Zipf stream (exponent S) over 120,000 distinct URLs
  --per-page N         search: the first page of N plans for every search of the mix (the cost of
                       the page's size against the cost of the request, ours and the ceiling alike)
  --against DIR        also measure hpd serve from another checkout, alternated with ours
  --node-flags=FLAGS   V8/Node flags for ours only, e.g. --node-flags=--max-semi-space-size=64
  --semi-space MB      young generation of ours and --against alike (e.g. 1): many collections per
                       run make the bytes allocated per request exact rather than ± one young generation
  --strace             two extra runs per server under strace (syscalls, sends, bytes per request)
  --perf               one extra run per server under perf record (CPU per request by DSO and symbol)
  --perf-dir DIR       keep the perf.data files there
  --help               this text`;
const { values: args, choice: workload } = benchArgsWithChoice(
  'bench:cpu',
  USAGE,
  {
    seconds: { type: 'string' },
    reps: { type: 'string' },
    builds: { type: 'string' },
    unique: { type: 'boolean' },
    zipf: { type: 'string' },
    'per-page': { type: 'string' },
    against: { type: 'string' },
    'node-flags': { type: 'string' },
    'semi-space': { type: 'string' },
    strace: { type: 'boolean' },
    perf: { type: 'boolean' },
    'perf-dir': { type: 'string' },
  },
  WORKLOADS.filter((w): w is Exclude<WorkloadName, 'realistic'> => w !== 'realistic'),
  'search',
);
const opt = (name: string): string | undefined => {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
};
const perPage = opt('per-page') === undefined ? null : Number(opt('per-page'));
if (perPage !== null && !(Number.isInteger(perPage) && perPage >= 1 && perPage <= 100))
  benchUsageError('bench:cpu', `--per-page takes a page size from 1 to 100, not ${opt('per-page')}`);
if (perPage !== null && workload !== 'search') benchUsageError('bench:cpu', `--per-page is for the search workload, not ${workload}`);
const seconds = Number(opt('seconds') ?? 4);
const reps = Number(opt('reps') ?? 3);
const year = 2025;
const BASE_URL = 'https://api.bench.test';
/** perf record's sampling frequency. */
const PERF_HZ = 2000;
const tsHooks = ['--import', join(ROOT, 'bin/register-typescript.js')];

/**
 * `--zipf S`: `draws` requests over the distinct URLs, the i-th (in the generator's random order) drawn
 * with weight 1 / i^S, the realistic mix of a response cache's life (a few ZIPs and ages take most of
 * it). ZIPs are drawn uniformly by the generator, not by county population (no population table here).
 */
function zipfSequence(distinct: readonly string[], s: number, draws: number): string[] {
  const cdf = new Float64Array(distinct.length);
  let sum = 0;
  for (let i = 0; i < distinct.length; i++) cdf[i] = sum += 1 / (i + 1) ** s;
  let seed = 12345;
  const rand = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const out: string[] = [];
  for (let k = 0; k < draws; k++) {
    const x = rand() * sum;
    let lo = 0;
    let hi = distinct.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    out.push(distinct[lo]!);
  }
  process.stdout.write(`zipf s=${s}: ${draws} requests over ${distinct.length} distinct URLs, ${new Set(out).size} drawn\n`);
  return out;
}

const source = await ensureBuild(year, opt('builds') === undefined ? undefined : resolve(opt('builds')!), (l) =>
  process.stderr.write(`cpu: ${l}\n`),
);
const work = mkdtempSync(join(tmpdir(), 'hpd-cpu-'));
const root = join(work, 'builds');
mkdirSync(join(root, String(year)), { recursive: true });
symlinkSync(realpathSync(join(source, String(year), 'current')), join(root, String(year), 'current'));
const servers: ServerProcess[] = [];
const traces = new Map<ServerProcess, GcTrace>();
try {
  const registry = openRegistry(root, BASE_URL, [year]);
  const zipf = opt('zipf') === undefined ? null : Number(opt('zipf'));
  const n = zipf !== null ? 120_000 : args.unique === true ? 20_000 : 400;
  const built = buildWorkloads(registry.get(year)!, { registry, baseUrl: BASE_URL }, n).find((x) => x.name === workload)!;
  registry.close();
  const w = perPage === null ? built : { ...built, urls: built.urls.map((u) => withPerPage(u, perPage)) };
  const urls = join(work, 'urls');
  writeFileSync(urls, `${(zipf === null ? w.urls : zipfSequence([...new Set(w.urls)], zipf, 400_000)).join('\n')}\n`);
  // Search pages computed for every request (the issue's uncached figure) unless HPD_SEARCH_CACHE_MB says otherwise.
  const env = benchServeEnv(root, join(work, 'state'), { HPD_SEARCH_CACHE_MB: process.env.HPD_SEARCH_CACHE_MB ?? '0' });
  const key = enterpriseKey(env);
  const [ceilingPort, metricsPort] = (await freePorts(2)) as [number, number];
  const pin = detectPinning();
  const semiSpace =
    opt('semi-space') === undefined
      ? []
      : [`--max-semi-space-size=${Number(opt('semi-space'))}`, `--min-semi-space-size=${Number(opt('semi-space'))}`];
  /**
   * `hpd serve --workers 0` of a checkout, pinned to the server core, under V8's GC trace (bytes
   * allocated per request; stdbuf makes the trace line-buffered, so each GC lands in its own run).
   */
  const serve = async (name: string, checkout: string, nodeFlags: readonly string[], extra: Record<string, string>) => {
    const trace = new GcTrace();
    const { server, origin } = await spawnHpdServe({
      name,
      command: 'stdbuf',
      args: [
        '-oL',
        process.execPath,
        ...semiSpace,
        ...nodeFlags,
        '--trace-gc-nvp',
        join(checkout, 'bin/hpd.js'),
        'serve',
        '--workers',
        '0',
      ],
      env: { ...env, HPD_BASE_URL: BASE_URL, ...extra },
      cwd: checkout,
      cpu: pin?.serverCpu ?? null,
      onStdoutLine: trace.onLine,
    });
    servers.push(server);
    traces.set(server, trace);
    return { server, origin };
  };
  const nodeFlags = (opt('node-flags') ?? '').split(' ').filter(Boolean);
  const { server: ours, origin: oursOrigin } = await serve('ours', ROOT, nodeFlags, { HPD_METRICS_PORT: String(metricsPort) });
  // --against DIR: a second `hpd serve` from another checkout (e.g. a worktree of the previous commit),
  // measured alternately with ours on the same CPU: an A/B of two versions that the machine's drift
  // affects alike.
  const againstDir = opt('against');
  const against = againstDir === undefined ? null : await serve('against', resolve(againstDir), [], { HPD_METRICS_PORT: '0' });
  const recorded: Record<string, { status: string; headers: Array<[string, string]>; body: string }> = {};
  const distinct = [...new Set(w.urls)];
  await mapLimit(distinct.slice(0, 2000), 8, async (url) => {
    const r = await fetchResponse(oursOrigin, url, { authorization: `Bearer ${key}` });
    if (r.status !== 200) throw new Error(`ours answered ${r.status} to ${url}`);
    recorded[url] = { status: `${r.status} ${r.statusText}`, headers: r.headers, body: r.body };
  });
  const ceilingUrls = join(work, 'ceiling-urls');
  writeFileSync(ceilingUrls, `${Object.keys(recorded).join('\n')}\n`);
  writeFileSync(join(work, 'ceiling.json'), JSON.stringify(recorded));
  const ceiling = await spawnServer({
    name: 'ceiling',
    command: process.execPath,
    args: [...tsHooks, join(ROOT, 'bench/ceiling/server.ts'), join(work, 'ceiling.json'), String(ceilingPort)],
    env: childEnv({}),
    cwd: ROOT,
    port: ceilingPort,
    cpu: pin?.serverCpu ?? null,
  });
  servers.push(ceiling);
  const ceilingOrigin = `http://127.0.0.1:${ceilingPort}`;
  /** One wrk run at full load (64 connections) against a server. */
  const fullLoad = (origin: string, file: string, durationS = seconds) =>
    runWrk({
      origin,
      urlsFile: file,
      headers: [`Authorization: Bearer ${key}`],
      connections: 64,
      durationS,
      paceMs: 0,
      cpu: pin?.generatorCpu ?? null,
    });
  /** A full-load run of each server with perf attached; `after` reads what it wrote. */
  const traced = async (
    tracer: (s: ServerProcess) => readonly [string, string[]],
    after: (s: ServerProcess, requests: number) => string,
  ): Promise<void> => {
    for (const [s, origin, file] of [
      [ours, oursOrigin, urls],
      [ceiling, ceilingOrigin, ceilingUrls],
    ] as const) {
      const [command, args] = tracer(s);
      const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
      // A tracer that dies early (a bad -o path, no permission) must not leave us waiting for its exit.
      const exited = new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, 500));
      const run = await fullLoad(origin, file);
      child.kill('SIGINT');
      await exited;
      process.stdout.write(`${command} ${s.name}: ${run.requests} requests\n${after(s, run.requests)}\n`);
    }
  };
  /** Every thread's CPU, switches and migrations per request of each timed run, by server. */
  const kernelRuns = new Map<ServerProcess, PerRequestStats[]>();
  const measure = async (s: ServerProcess, origin: string, file: string) => {
    const trace = traces.get(s);
    const mark = trace?.mark() ?? 0;
    const before = snapshot(s.pid);
    const run = await fullLoad(origin, file);
    const k = perRequest(before, snapshot(s.pid), run.requests);
    kernelRuns.set(s, [...(kernelRuns.get(s) ?? []), k]);
    const gc = trace?.summary(mark);
    return {
      rps: run.rps,
      user: k.userUs,
      sys: k.sysUs,
      errors: run.errors.total,
      // No collection in the run: nothing was measured (the trace reports allocation at each GC).
      allocated:
        gc === undefined || gc.scavenges + gc.markCompacts + gc.others === 0
          ? 'not measured'
          : `${Math.round(gc.bytes / run.requests)} B/req allocated`,
    };
  };
  // --strace: two extra runs of each server under strace (syscalls, socket sends and bytes per request; slows it).
  const syscalls = new Map<ServerProcess, SyscallProfile | NotProfiled>();
  if (args.strace === true) {
    const profiled: Array<readonly [ServerProcess, string, string]> = [
      [ours, oursOrigin, urls],
      [ceiling, ceilingOrigin, ceilingUrls],
    ];
    if (against !== null) profiled.push([against.server, against.origin, urls]);
    for (const [s, origin, file] of profiled) {
      syscalls.set(
        s,
        await syscallProfile({
          pid: s.pid,
          load: async (secs) => (await fullLoad(origin, file, secs)).requests,
          countSeconds: seconds,
          sendSeconds: Math.min(seconds, 2),
          dir: work,
        }),
      );
    }
  }
  // --perf: one extra run of each server under `perf record` (where the CPU goes, kernel included).
  if (args.perf === true) {
    const perfDir = opt('perf-dir') ?? work;
    mkdirSync(perfDir, { recursive: true });
    const data = (s: ServerProcess): string => join(perfDir, `perf-${s.name}.data`);
    await traced(
      (s) => ['perf', ['record', '-F', String(PERF_HZ), '-g', '-p', String(s.pid), '-o', data(s)]],
      (s, requests) => perfSummary(data(s), requests),
    );
  }
  const rows: string[] = [];
  for (let r = 0; r < reps; r++) {
    const o = await measure(ours, oursOrigin, urls);
    const c = await measure(ceiling, ceilingOrigin, ceilingUrls);
    const { hit: hits, miss } = await searchCacheLookups(metricsPort);
    const lookups = hits + miss;
    const line = `rep ${r + 1}: search cache ${lookups === 0 ? 'off' : `hit rate ${((100 * hits) / lookups).toFixed(1)} % so far`}; ours ${o.rps.toFixed(0)} req/s, ${o.user.toFixed(1)}+${o.sys.toFixed(1)} µs user+sys/req, ${o.allocated} (errors ${o.errors}); ceiling ${c.rps.toFixed(0)} req/s, ${c.user.toFixed(1)}+${c.sys.toFixed(1)} µs; ratio rps ${(o.rps / c.rps).toFixed(3)}, cpu ${((c.user + c.sys) / (o.user + o.sys)).toFixed(3)}`;
    rows.push(line);
    process.stdout.write(`${line}\n`);
    if (against !== null) {
      const a = await measure(against.server, against.origin, urls);
      process.stdout.write(
        `rep ${r + 1}: against ${a.rps.toFixed(0)} req/s, ${a.user.toFixed(1)}+${a.sys.toFixed(1)} µs/req, ${a.allocated} (errors ${a.errors}); ratio rps ${(a.rps / c.rps).toFixed(3)}; ours ÷ against: rps ${(o.rps / a.rps).toFixed(3)}, cpu ${((a.user + a.sys) / (o.user + o.sys)).toFixed(3)}\n`,
      );
    }
  }
  const kernelServers = [...(against === null ? [] : [against.server]), ours, ceiling];
  process.stdout.write(
    `\nPer request, what the kernel sees (CPU and switches: medians of the ${reps} timed runs; syscalls: --strace runs):\n\n${kernelTable(
      [
        {
          workload,
          servers: kernelServers.map((s) => ({ server: s.name, runs: kernelRuns.get(s) ?? [], syscalls: syscalls.get(s) ?? null })),
        },
      ],
      'run with --strace',
    ).join('\n')}\n`,
  );
} finally {
  for (const s of servers) await s.stop(15_000);
  rmSync(work, { recursive: true, force: true });
}

/** Rows of `perf report -n` (percent, samples, names…) with their samples as µs per request. */
function perfRows(args: readonly string[], requests: number): Array<{ us: number; name: string }> {
  const r = spawnSync('perf', ['report', '--stdio', '--no-children', '-g', 'none', '-n', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3 && f[0]!.endsWith('%'))
    .map((f) => ({ us: (Number(f[1]) * 1e6) / PERF_HZ / requests, name: f.slice(2).join(' ') }));
}

/** CPU per request by DSO, the kernel's top symbols, then every symbol above 0.35 %. */
function perfSummary(data: string, requests: number): string {
  const line = (r: { us: number; name: string }): string => `  ${r.us.toFixed(2)} µs/req ${r.name}`;
  return [
    'by DSO:',
    ...perfRows(['-i', data, '--sort', 'dso'], requests).map(line),
    'kernel:',
    ...perfRows(['-i', data, '--dsos', '[kernel.kallsyms]', '--sort', 'sym'], requests).slice(0, 25).map(line),
    'symbols:',
    ...perfRows(['-i', data, '--sort', 'dso,sym', '--percent-limit', '0.35'], requests).map(line),
  ].join('\n');
}
