/**
 * @module The benchmark suite in one run: micro-benchmarks, then load runs against the targets on the
 * same machine, alternated, so that the noise of a shared machine hits all of them alike.
 *
 * 1. Open the build (the national PY2025 build by default; built first when missing) in this process;
 *    run the micro-benchmarks; draw the workloads from it.
 * 2. Start the targets, each pinned to the server core: **ours** (`hpd serve`, one process, an
 *    enterprise key made by `hpd keys create`, the search response cache off: every search computed),
 *    **baseline** (Hono + SQLite over the same build, bench/baseline), **ours_cached** (ours with the
 *    search cache at its default, for the realistic workload only) and, after every workload URL has
 *    been fetched from ours and compared field by field with the baseline's answer, **ceiling** (bare
 *    uWS replaying our recorded bytes).
 * 3. Full load (closed loop, wrk): for each repetition, each workload, each of its targets in turn.
 * 4. Open loop (wrk2 at a constant rate): for the latency workloads, at 50 %, 80 % and 95 % of our
 *    median full-load rate, ours and the ceiling alternated at the same offered rate.
 * 5. Medians of the repetitions, ratios, the search cache's hit rate on the realistic stream, memory,
 *    and the checks against the targets of the issues.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { buildsRoot as defaultBuildsRoot, cacheRoot, REPO_ROOT } from '../../src/cli/paths.ts';
import { SETTINGS } from '../../src/config/settings.ts';
import { openRegistry, yearsWithBuilds } from '../../src/operations/data-registry.ts';
import { runMicro, type MicroResult } from './micro.ts';
import {
  benchServeEnv,
  childEnv,
  detectPinning,
  enterpriseKey,
  QUOTA_OUT_OF_REACH,
  freePorts,
  memoryOf,
  spawnServer,
  type Memory,
  type Pinning,
  type ServerProcess,
} from './processes.ts';
import { lruHits } from './realistic.ts';
import { median, MIB } from './util.ts';
import { fetchResponse, jsonDiff, mapLimit } from './verify.ts';
import { buildWorkloads, TARGETS, type RealisticSize, type TargetName, type Workload, type WorkloadName } from './workloads.ts';
import { runWrk, wrkVersion, type WrkRun } from './wrk.ts';
import { searchCacheLookups } from './cache-lookups.ts';
import { ensureWrk2 } from './wrk2.ts';

export { TARGETS, type TargetName };

export interface SuiteOptions {
  readonly mode: 'full' | 'short';
  /** Builds root holding `<year>/current`; default: HPD_DATA_DIR or data/builds, built when missing. */
  readonly buildsRoot?: string;
  readonly year: number;
  readonly durationS: number;
  readonly reps: number;
  readonly connections: number;
  /** Workloads that get the open-loop (wrk2) latency runs. */
  readonly openLoop: readonly WorkloadName[];
  /** Offered rates of the open-loop runs, as fractions of our median full-load rate. */
  readonly openLoopLevels: readonly number[];
  /** One warm-up run per target and workload before measuring. */
  readonly warmup: boolean;
  readonly urlsPerWorkload: number;
  /** The realistic search stream's size; null leaves that workload (and ours_cached) out. */
  readonly realistic: RealisticSize | null;
  /** Workloads to run (default: all). */
  readonly workloads?: readonly WorkloadName[];
  /** Time budget per micro-benchmark task; 0 skips them. */
  readonly microTimeMs: number;
  /** Run `hpd serve` under --cpu-prof, profiles written here. */
  readonly profileDir?: string;
  readonly log: (line: string) => void;
}

export interface Summary {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p90_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  /** Errors summed over the repetitions. */
  readonly errors: number;
  readonly bytes_per_response: number;
  readonly connections: number;
}

export interface LoadResult {
  readonly runs: WrkRun[];
  readonly median: Summary;
}

/** Latency percentiles of open-loop runs, ms (medians over the repetitions). */
export interface OpenLoopPercentiles {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

export interface OpenLoopResult {
  readonly runs: WrkRun[];
  readonly median: {
    readonly achieved_rps: number;
    /** From the time each request was due (wrk2's recorded latency). */
    readonly corrected: OpenLoopPercentiles;
    /** From the time each request was sent. */
    readonly uncorrected: OpenLoopPercentiles | null;
    readonly errors: number;
  };
}

export interface OpenLoopLevel {
  /** Fraction of our median full-load rate. */
  readonly level: number;
  /** Requests per second offered to every target. */
  readonly rate: number;
  readonly targets: Partial<Record<TargetName, OpenLoopResult>>;
  /** Ours' corrected p99 ÷ the ceiling's at the same offered rate. */
  readonly p99_ratio: number | null;
}

export interface WorkloadResult {
  readonly name: WorkloadName;
  readonly title: string;
  /** Requests in the replayed list, and how many of them are distinct. */
  readonly urls: number;
  readonly distinct_urls: number;
  readonly targets: Partial<Record<TargetName, { full: LoadResult }>>;
  /** Why a target did not run this workload. */
  readonly skipped: Partial<Record<TargetName, string>>;
  readonly open_loop: OpenLoopLevel[];
}

export interface Check {
  readonly id: string;
  readonly description: string;
  readonly value: number;
  readonly target: number;
  readonly unit: string;
  /** `>=` or `<=` the target. */
  readonly direction: '>=' | '<=';
  readonly met: boolean;
}

/** The search response cache: how "uncached" was obtained, and its hit rate on the realistic stream. */
export interface SearchCacheResult {
  readonly setting: string;
  /** Whether this build declares the setting (src/config/settings.ts). */
  readonly declared: boolean;
  /** The size ours_cached ran with, in MiB: HPD_SEARCH_CACHE_MB from the bench's environment, else the declared default. */
  readonly default_mb: number | null;
  readonly uncached_note: string;
  /** Null without the realistic workload. */
  readonly realistic: null | {
    readonly universe: number;
    readonly requests_in_file: number;
    readonly distinct_in_file: number;
    readonly zipf_exponent: number;
    readonly weighting: string;
    /** Requests of ours_cached's measured runs. */
    readonly requests_measured: number;
    /** hits ÷ lookups from ours_cached's /metrics, over its measured runs; null when not counted. */
    readonly hit_rate_measured: number | null;
    readonly lookups_measured: number;
    /** LRU simulation of the same stream; null without a declared size. */
    readonly hit_rate_estimated: number | null;
    readonly estimate_basis: string;
  };
}

export interface SuiteResult {
  readonly schema: 2;
  readonly mode: 'full' | 'short';
  readonly started_at: string;
  readonly wall_seconds: number;
  readonly machine: {
    readonly node: string;
    readonly cpus: number;
    readonly cpu_model: string;
    readonly pinning: Pinning | null;
    readonly load_generator: string;
    readonly loadavg_start: number[];
    readonly loadavg_end: number[];
  };
  readonly dataset: {
    readonly year: number;
    readonly build_hash: string;
    readonly plans: number;
    readonly zips: number;
    readonly data_source: string;
    readonly dir: string;
  };
  readonly settings: {
    readonly duration_s: number;
    readonly reps: number;
    readonly connections: number;
    readonly open_loop: string;
    readonly urls_per_workload: number;
    readonly baseline: string;
  };
  readonly micro: MicroResult[];
  readonly verification: {
    readonly compared: Record<string, number>;
    readonly mismatches: Array<{ url: string; target: TargetName; diffs: string[] }>;
    readonly ok: boolean;
  };
  readonly workloads: WorkloadResult[];
  /** Per process: after start-up (before any load), the largest VmRSS seen after a run, and at the end. */
  readonly memory: Partial<
    Record<
      TargetName,
      { readonly idle: Memory | null; readonly rss_max_bytes: number; readonly hwm_bytes: number; readonly end: Memory } | null
    >
  >;
  readonly ratios: Partial<Record<WorkloadName, { readonly ours_baseline: number | null; readonly ours_ceiling: number | null }>>;
  readonly search_cache: SearchCacheResult;
  readonly checks: Check[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(ROOT, 'bin/hpd.js');
const BASE_URL = 'https://api.bench.test';
/** High enough that the daily quota never refuses a benchmark request. */
const QUOTA = QUOTA_OUT_OF_REACH;
/** The search response cache's setting; 0 turns it off. */
const SEARCH_CACHE = 'HPD_SEARCH_CACHE_MB';
/** The open-loop ratio target: ours' p99 ≤ 1.25× the ceiling's at 80 % of our maximum rate. */
const P99_RATIO_TARGET = 1.25;
const P99_RATIO_LEVEL = 0.8;

/** The builds root to serve: the given one, or the default with the national build made when missing. */
export async function ensureBuild(year: number, root: string | undefined, log: (l: string) => void): Promise<string> {
  if (root !== undefined) return root;
  const dir = defaultBuildsRoot();
  if (!yearsWithBuilds(dir).includes(year)) {
    log(`no PY${year} build under ${dir}: building the national dataset (about 15 s)`);
    await buildDataset({
      year,
      root: REPO_ROOT,
      buildsRoot: dir,
      cacheDir: cacheRoot(),
      offline: true,
      progress: createProgress({ tty: false, quiet: true }),
    });
  }
  return dir;
}

function summarize(runs: readonly WrkRun[]): Summary {
  const m = (f: (r: WrkRun) => number): number => median(runs.map(f));
  return {
    rps: m((r) => r.rps),
    p50_ms: m((r) => r.latency_ms.p50),
    p90_ms: m((r) => r.latency_ms.p90),
    p99_ms: m((r) => r.latency_ms.p99),
    max_ms: m((r) => r.latency_ms.max),
    errors: runs.reduce((s, r) => s + r.errors.total, 0),
    bytes_per_response: m((r) => r.bytes_per_response),
    connections: runs[0]?.connections ?? 0,
  };
}

function summarizeOpen(runs: readonly WrkRun[]): OpenLoopResult['median'] {
  const m = (f: (r: WrkRun) => number): number => median(runs.map(f));
  const pick = (which: 'corrected' | 'uncorrected'): OpenLoopPercentiles | null => {
    if (runs.some((r) => r.open_loop?.[which] == null)) return null;
    const of = (k: keyof OpenLoopPercentiles): number => m((r) => r.open_loop![which]![k]);
    return { p50: of('p50'), p99: of('p99'), p999: of('p999'), max: of('max') };
  };
  return {
    achieved_rps: m((r) => r.rps),
    corrected: pick('corrected')!,
    uncorrected: pick('uncorrected'),
    errors: runs.reduce((s, r) => s + r.errors.total, 0),
  };
}

/**
 * The search-cache setting as this build declares it (absent until the cache exists), and the size
 * ours_cached runs with: it inherits the bench's environment, so HPD_SEARCH_CACHE_MB there wins over the
 * declared default.
 */
function searchCacheSetting(): { declared: boolean; defaultMb: number | null } {
  const s = Object.values(SETTINGS).find((x) => x.name === SEARCH_CACHE) as { fallback: unknown } | undefined;
  const fromEnv = process.env[SEARCH_CACHE];
  const fallback = typeof s?.fallback === 'number' ? s.fallback : null;
  const inEffect =
    s !== undefined && fromEnv !== undefined && fromEnv.trim() !== '' && Number.isFinite(Number(fromEnv)) ? Number(fromEnv) : fallback;
  return { declared: s !== undefined, defaultMb: inEffect };
}

interface Prepared {
  readonly buildDir: string;
  readonly root: string;
  readonly micro: MicroResult[];
  readonly workloads: Workload[];
  readonly dataset: SuiteResult['dataset'];
  readonly urlFiles: Map<WorkloadName, string>;
}

/** Step 1: the build pinned in a private builds root, the micro-benchmarks, the workloads' URL files. */
async function prepare(o: SuiteOptions, work: string): Promise<Prepared> {
  const log = o.log;
  // A private builds root whose <year>/current names today's build directory, so every target serves
  // the same build even if data/builds is rebuilt meanwhile.
  const sourceRoot = await ensureBuild(o.year, o.buildsRoot, log);
  const buildDir = realpathSync(join(sourceRoot, String(o.year), 'current'));
  const root = join(work, 'builds');
  mkdirSync(join(root, String(o.year)), { recursive: true });
  symlinkSync(buildDir, join(root, String(o.year), 'current'));
  const registry = openRegistry(root, BASE_URL, [o.year]);
  try {
    const yd = registry.get(o.year)!;
    const ctx = { registry, baseUrl: BASE_URL };
    log(
      `build ${yd.ds.buildHash.slice(0, 12)} (PY${o.year}, ${yd.ds.planCount} plans, ${yd.ds.zipCount} ZIPs, ${yd.ds.manifest.data_source}) from ${buildDir}`,
    );
    if (o.microTimeMs > 0) log(`micro-benchmarks (tinybench, ${o.microTimeMs} ms per task)`);
    const micro = o.microTimeMs > 0 ? await runMicro(yd, ctx, o.microTimeMs) : [];
    const wanted = (n: WorkloadName): boolean => o.workloads === undefined || o.workloads.includes(n);
    const workloads = buildWorkloads(
      yd,
      ctx,
      o.urlsPerWorkload,
      o.realistic !== null && wanted('realistic') ? o.realistic : undefined,
    ).filter((w) => wanted(w.name));
    const dataset = {
      year: o.year,
      build_hash: yd.ds.buildHash,
      plans: yd.ds.planCount,
      zips: yd.ds.zipCount,
      data_source: yd.ds.manifest.data_source,
      dir: buildDir,
    };
    const urlFiles = new Map<WorkloadName, string>();
    for (const w of workloads) {
      const f = join(work, `${w.name}.urls`);
      writeFileSync(f, `${w.urls.join('\n')}\n`);
      urlFiles.set(w.name, f);
    }
    return { buildDir, root, micro, workloads, dataset, urlFiles };
  } finally {
    registry.close();
  }
}

/** The environment of one `hpd serve` target: its own state directory, quotas out of reach. */
function hpdEnv(name: TargetName, work: string, root: string, extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  return benchServeEnv(root, join(work, `state-${name}`), { HPD_CACHE_DIR: join(work, 'cache'), ...extra });
}

/**
 * `hpd serve --workers 0` pinned to the server core: REST in the main thread, as the earlier runs
 * measured (one worker would add a second copy of the dataset for no extra core); the worker
 * configurations are measured by bench/workers.bench.ts. `ports`: REST, MCP, authorization, metrics
 * (the last used only `withMetrics`), found beforehand so that the child starts at once.
 */
function spawnHpd(
  o: SuiteOptions,
  name: TargetName,
  env: NodeJS.ProcessEnv,
  ports: readonly number[],
  cpu: number | null,
  withMetrics: boolean,
): Promise<ServerProcess> {
  const [rest, mcp, auth, metrics] = ports as [number, number, number, number];
  return spawnServer({
    name,
    command: process.execPath,
    args: [
      ...(o.profileDir !== undefined && name === 'ours' ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : []),
      HPD,
      'serve',
      '--workers',
      '0',
    ],
    env: {
      ...env,
      HPD_HOST: '127.0.0.1',
      HPD_PORT: String(rest),
      HPD_MCP_PORT: String(mcp),
      HPD_AUTH_PORT: String(auth),
      HPD_BASE_URL: BASE_URL,
      ...(withMetrics ? { HPD_METRICS_PORT: String(metrics) } : {}),
    },
    cwd: ROOT,
    port: rest,
    cpu,
    readyUrl: `http://127.0.0.1:${rest}/readyz`,
  });
}

export async function runSuite(o: SuiteOptions): Promise<SuiteResult> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const wrk = wrkVersion();
  if (wrk === null) throw new Error('wrk is not installed: apt-get install -y wrk (Debian package), then run again');
  const wrk2 = o.openLoop.length > 0 ? ensureWrk2(o.log) : null;
  const pinning = detectPinning();
  const work = mkdtempSync(join(tmpdir(), 'hpd-bench-'));
  const servers: ServerProcess[] = [];
  try {
    const prep = await prepare(o, work);
    const r = await loadAndMeasure(o, prep, work, servers, pinning, wrk2);
    for (const s of servers.splice(0).reverse()) await s.stop();
    const cpu = cpus()[0]?.model ?? 'unknown';
    return {
      schema: 2,
      mode: o.mode,
      started_at: startedAt,
      wall_seconds: (performance.now() - t0) / 1000,
      machine: {
        node: process.version,
        cpus: cpus().length,
        cpu_model: cpu,
        pinning,
        load_generator: `${wrk} (Debian package), 1 thread${wrk2 === null ? '' : '; wrk2 (giltene/wrk2 44a94c1, built from source) for the open-loop runs, 1 thread'}`,
        loadavg_start: loadStart,
        loadavg_end: loadavg(),
      },
      dataset: prep.dataset,
      settings: {
        duration_s: o.durationS,
        reps: o.reps,
        connections: o.connections,
        open_loop: `wrk2 -R at ${o.openLoopLevels.map((l) => `${Math.round(l * 100)} %`).join(', ')} of our median full-load rate, ${o.connections} connections, ours and the ceiling alternated at the same offered rate; latency corrected for coordinated omission (from when each request was due), uncorrected (from its send) beside it; wrk2's timers have a ~1 ms floor, hence the ratio target`,
        urls_per_workload: o.urlsPerWorkload,
        baseline: r.baselineText,
      },
      micro: prep.micro,
      verification: r.verification,
      workloads: r.workloads,
      memory: r.memory,
      ratios: r.ratios,
      search_cache: r.searchCache,
      checks: r.checks,
    };
  } finally {
    for (const s of servers.reverse()) await s.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

interface Targets {
  readonly byName: Partial<Record<TargetName, ServerProcess>>;
  /** The Authorization key each target accepts (the baseline stores the hash of ours'). */
  readonly keys: Partial<Record<TargetName, string>>;
  readonly cachedMetricsPort: number | null;
  readonly idle: Partial<Record<TargetName, Memory | null>>;
  readonly baselineText: string;
}

const tsHooks = ['--import', join(ROOT, 'bin/register-typescript.js')];
const origin = (port: number): string => `http://127.0.0.1:${port}`;

/** Step 2: ours, the baseline (its database loaded while ours starts) and, for the realistic workload, ours_cached. */
async function startTargets(o: SuiteOptions, prep: Prepared, work: string, servers: ServerProcess[], cpu: number | null): Promise<Targets> {
  const cached = prep.workloads.some((w) => w.targets.includes('ours_cached'));
  o.log(
    `starting ours (hpd serve, ${SEARCH_CACHE}=0)${cached ? ', ours_cached (search cache at its default, /metrics on)' : ''} and loading the baseline database (SQLite)`,
  );
  const ports = await freePorts(9);
  const oursEnv = hpdEnv('ours', work, prep.root, { [SEARCH_CACHE]: '0' });
  const key = enterpriseKey(oursEnv, 'load benchmark');
  const dbPath = join(work, 'baseline.db');
  const [ours, loaded] = await Promise.all([
    spawnHpd(o, 'ours', oursEnv, ports.slice(0, 4), cpu, false),
    new Promise<{ rates: number; plans: number; load_ms: number }>((resolve, reject) => {
      const keyHash = createHash('sha256').update(key).digest('hex');
      const r = spawnSync(process.execPath, [...tsHooks, join(ROOT, 'bench/baseline/load.ts'), prep.buildDir, dbPath, keyHash], {
        cwd: ROOT,
        env: childEnv({}),
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (r.status !== 0) reject(new Error(`baseline load failed: ${r.stderr.trim()}`));
      else resolve(JSON.parse(r.stdout) as { rates: number; plans: number; load_ms: number });
    }),
  ]);
  servers.push(ours);
  const idle: Targets['idle'] = { ours: memoryOf(ours.pid) };
  o.log(`baseline database: ${loaded.rates} rate rows, ${loaded.plans} plan variants in ${(loaded.load_ms / 1000).toFixed(1)} s`);
  // The baseline and ours_cached start together: their start-up is not measured, only their idle memory.
  const cachedEnv = cached ? hpdEnv('ours_cached', work, prep.root, {}) : null;
  const cachedKey = cachedEnv === null ? null : enterpriseKey(cachedEnv, 'load benchmark');
  const started = await Promise.allSettled([
    spawnServer({
      name: 'baseline',
      command: process.execPath,
      args: [...tsHooks, join(ROOT, 'bench/baseline/server.ts'), dbPath, String(ports[4]), BASE_URL],
      env: childEnv({ HPD_QUOTA_ENTERPRISE: QUOTA }),
      cwd: ROOT,
      port: ports[4]!,
      cpu,
    }),
    cachedEnv === null ? null : spawnHpd(o, 'ours_cached', cachedEnv, ports.slice(5, 9), cpu, true),
  ]);
  // Whichever started is stopped with the rest, even when the other failed.
  for (const r of started) if (r.status === 'fulfilled' && r.value !== null) servers.push(r.value);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const baseline = (started[0] as PromiseFulfilledResult<ServerProcess>).value;
  const oursCached = (started[1] as PromiseFulfilledResult<ServerProcess | null>).value;
  idle.baseline = memoryOf(baseline.pid);
  const byName: Targets['byName'] = { ours, baseline };
  const keys: Targets['keys'] = { ours: key, baseline: key, ceiling: key };
  if (oursCached !== null && cachedKey !== null) {
    keys.ours_cached = cachedKey;
    byName.ours_cached = oursCached;
    idle.ours_cached = memoryOf(oursCached.pid);
  }
  const baselineText = `Hono ${packageVersion('hono')} on @hono/node-server ${packageVersion('@hono/node-server')}, better-sqlite3 ${packageVersion('better-sqlite3')} (SQLite, WAL, synchronous=NORMAL), loaded from the same build: ${loaded.rates} rate rows, ${loaded.plans} plan variants`;
  return { byName, keys, cachedMetricsPort: cached ? ports[8]! : null, idle, baselineText };
}

/**
 * Every verified URL fetched from ours and compared with the baseline's answer field by field; the
 * realistic sample also twice from ours_cached (the second answer from its cache), which must send
 * ours' bytes. Then the ceiling starts with ours' recorded answers and must replay them.
 */
async function verifyAndStartCeiling(
  o: SuiteOptions,
  prep: Prepared,
  t: Targets,
  work: string,
  servers: ServerProcess[],
  cpu: number | null,
): Promise<SuiteResult['verification']> {
  const at = (name: TargetName): string => origin(t.byName[name]!.port);
  const auth = (name: TargetName): Record<string, string> => ({ authorization: `Bearer ${t.keys[name]}` });
  const recorded: Record<string, { status: string; headers: Array<[string, string]>; body: string }> = {};
  const compared: Record<string, number> = {};
  const mismatches: SuiteResult['verification']['mismatches'] = [];
  const count = (k: string): void => {
    compared[k] = (compared[k] ?? 0) + 1;
  };
  for (const w of prep.workloads) {
    await mapLimit(w.verify, 8, async (url) => {
      const r = await fetchResponse(at('ours'), url, auth('ours'));
      if (r.status !== 200) throw new Error(`ours answered ${r.status} to ${url}: ${r.body.slice(0, 300)}`);
      recorded[url] = { status: `${r.status} ${r.statusText}`, headers: r.headers, body: r.body };
      if (w.targets.includes('ours_cached')) {
        for (let i = 0; i < 2; i++) {
          const c = await fetchResponse(at('ours_cached'), url, auth('ours_cached'));
          if (c.status !== 200 || c.body !== r.body)
            mismatches.push({
              url,
              target: 'ours_cached',
              diffs: [`fetch ${i + 1}: status ${c.status}, body ${c.body === r.body ? 'equal' : 'differs from ours'}`],
            });
        }
        count('ours_cached');
      }
      if (!w.baseline) return;
      const b = await fetchResponse(origin(t.byName.baseline!.port), url, auth('baseline'));
      const diffs = b.status !== 200 ? [`status ${b.status}: ${b.body.slice(0, 200)}`] : jsonDiff(JSON.parse(r.body), JSON.parse(b.body));
      if (diffs.length > 0) mismatches.push({ url, target: 'baseline', diffs });
      count(w.name);
    });
  }
  const responsesFile = join(work, 'ceiling.json');
  writeFileSync(responsesFile, JSON.stringify(recorded));
  const [port] = (await freePorts(1)) as [number];
  const ceiling = await spawnServer({
    name: 'ceiling',
    command: process.execPath,
    args: [...tsHooks, join(ROOT, 'bench/ceiling/server.ts'), responsesFile, String(port)],
    env: childEnv({}),
    cwd: ROOT,
    port,
    cpu,
  });
  servers.push(ceiling);
  t.byName.ceiling = ceiling;
  t.idle.ceiling = memoryOf(ceiling.pid);
  await mapLimit(Object.keys(recorded), 8, async (url) => {
    const c = await fetchResponse(origin(port), url, auth('ceiling'));
    if (c.body !== recorded[url]!.body) mismatches.push({ url, target: 'ceiling', diffs: ['body bytes differ from ours'] });
    count('ceiling');
  });
  o.log(
    `verified: ${Object.entries(compared)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} responses compared, ${mismatches.length} mismatches`,
  );
  if (mismatches.length > 0) {
    for (const m of mismatches.slice(0, 10)) o.log(`  MISMATCH ${m.target} ${m.url}\n    ${m.diffs.join('\n    ')}`);
    throw new Error(
      `${mismatches.length} responses differ between ours and ${[...new Set(mismatches.map((m) => m.target))].join(' and ')}; see above`,
    );
  }
  return { compared, mismatches, ok: true };
}

/** Runs wrk or wrk2 against the targets, keeping each (workload, target) stream's position and the peak memory. */
class Loader {
  readonly memMax: Partial<Record<TargetName, number>> = {};
  readonly #offsets = new Map<string, number>();
  readonly o: SuiteOptions;
  readonly prep: Prepared;
  readonly t: Targets;
  readonly generatorCpu: number | null;
  readonly wrk2: string | null;

  constructor(o: SuiteOptions, prep: Prepared, t: Targets, generatorCpu: number | null, wrk2: string | null) {
    this.o = o;
    this.prep = prep;
    this.t = t;
    this.generatorCpu = generatorCpu;
    this.wrk2 = wrk2;
  }

  /** Requests sent so far to `target` from `workload`'s list (the realistic stream continues across runs). */
  offset(w: WorkloadName, target: TargetName): number {
    return this.#offsets.get(`${w}/${target}`) ?? 0;
  }

  async run(target: TargetName, w: Workload, durationS: number, rate?: number): Promise<WrkRun> {
    const k = `${w.name}/${target}`;
    const r = await runWrk({
      origin: origin(this.t.byName[target]!.port),
      urlsFile: this.prep.urlFiles.get(w.name)!,
      headers: [`Authorization: Bearer ${this.t.keys[target]}`],
      connections: this.o.connections,
      durationS,
      paceMs: 0,
      cpu: this.generatorCpu,
      offset: this.offset(w.name, target),
      ...(rate === undefined ? {} : { rate, binary: this.wrk2! }),
    });
    this.#offsets.set(k, this.offset(w.name, target) + r.requests);
    for (const [name, s] of Object.entries(this.t.byName) as Array<[TargetName, ServerProcess]>) {
      const m = memoryOf(s.pid);
      if (m !== null) this.memMax[name] = Math.max(this.memMax[name] ?? 0, m.rss_bytes);
    }
    return r;
  }
}

async function warmUp(l: Loader): Promise<void> {
  if (!l.o.warmup) return;
  l.o.log('warm-up: 1 s per target and workload');
  for (const w of l.prep.workloads) for (const t of w.targets) await l.run(t, w, 1);
}

/** Step 3: full load, closed loop, every workload's targets alternated run by run. */
async function fullLoad(l: Loader): Promise<Map<string, WrkRun[]>> {
  const { o, prep } = l;
  const full = new Map<string, WrkRun[]>();
  for (let rep = 0; rep < o.reps; rep++) {
    for (const w of prep.workloads) {
      for (const t of w.targets) {
        const r = await l.run(t, w, o.durationS);
        const k = `${w.name}/${t}`;
        full.set(k, [...(full.get(k) ?? []), r]);
        o.log(
          `full  ${rep + 1}/${o.reps} ${w.name.padEnd(9)} ${t.padEnd(11)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.latency_ms.p50.toFixed(2)} ms  p99 ${r.latency_ms.p99.toFixed(2)} ms  errors ${r.errors.total}`,
        );
      }
    }
  }
  return full;
}

/** Step 4: open loop (wrk2), ours and the ceiling at the same constant rates, alternated. */
async function openLoop(l: Loader, full: Map<string, WrkRun[]>): Promise<Map<WorkloadName, OpenLoopLevel[]>> {
  const { o, prep } = l;
  const out = new Map<WorkloadName, OpenLoopLevel[]>();
  const chosen = prep.workloads.filter((w) => o.openLoop.includes(w.name) && w.targets.includes('ceiling') && full.has(`${w.name}/ours`));
  if (chosen.length === 0) return out;
  const runs = new Map<string, WrkRun[]>();
  const rateOf = (w: Workload, level: number): number => level * summarize(full.get(`${w.name}/ours`)!).rps;
  for (let rep = 0; rep < o.reps; rep++) {
    for (const w of chosen) {
      for (const level of o.openLoopLevels) {
        for (const t of ['ours', 'ceiling'] as const) {
          const r = await l.run(t, w, o.durationS, rateOf(w, level));
          const k = `${w.name}/${level}/${t}`;
          runs.set(k, [...(runs.get(k) ?? []), r]);
          const c = r.open_loop!.corrected;
          o.log(
            `open  ${rep + 1}/${o.reps} ${w.name.padEnd(9)} ${`${Math.round(level * 100)} %`.padStart(4)} ${t.padEnd(8)} offered ${r.open_loop!.rate.toFixed(0).padStart(6)}/s  achieved ${r.rps.toFixed(0).padStart(6)}/s  p50 ${c.p50.toFixed(2)} ms  p99 ${c.p99.toFixed(2)} ms  p99.9 ${c.p999.toFixed(2)} ms  errors ${r.errors.total}`,
          );
        }
      }
    }
  }
  for (const w of chosen) {
    out.set(
      w.name,
      o.openLoopLevels.map((level) => {
        const targets: OpenLoopLevel['targets'] = {};
        for (const t of ['ours', 'ceiling'] as const)
          targets[t] = { runs: runs.get(`${w.name}/${level}/${t}`)!, median: summarizeOpen(runs.get(`${w.name}/${level}/${t}`)!) };
        const ratio = targets.ours!.median.corrected.p99 / targets.ceiling!.median.corrected.p99;
        return { level, rate: rateOf(w, level), targets, p99_ratio: Number.isFinite(ratio) ? ratio : null };
      }),
    );
  }
  return out;
}

async function loadAndMeasure(
  o: SuiteOptions,
  prep: Prepared,
  work: string,
  servers: ServerProcess[],
  pinning: Pinning | null,
  wrk2: string | null,
) {
  const cpu = pinning?.serverCpu ?? null;
  const t = await startTargets(o, prep, work, servers, cpu);
  const verification = await verifyAndStartCeiling(o, prep, t, work, servers, cpu);
  const l = new Loader(o, prep, t, pinning?.generatorCpu ?? null, wrk2);
  await warmUp(l);
  // The search cache's lookups over ours_cached's measured runs (the realistic stream is all it serves).
  const from = l.offset('realistic', 'ours_cached');
  const before = t.cachedMetricsPort === null ? null : await searchCacheLookups(t.cachedMetricsPort);
  const full = await fullLoad(l);
  const after = t.cachedMetricsPort === null ? null : await searchCacheLookups(t.cachedMetricsPort);
  const to = l.offset('realistic', 'ours_cached');
  const open = await openLoop(l, full);
  const memory: SuiteResult['memory'] = {};
  for (const [name, server] of Object.entries(t.byName) as Array<[TargetName, ServerProcess]>) {
    const m = memoryOf(server.pid);
    memory[name] =
      m === null
        ? null
        : { idle: t.idle[name] ?? null, rss_max_bytes: Math.max(l.memMax[name] ?? 0, m.rss_bytes), hwm_bytes: m.hwm_bytes, end: m };
  }
  const workloads = prep.workloads.map((w) => workloadResult(w, full, open.get(w.name) ?? []));
  const lookups = before === null || after === null ? null : { hit: after.hit - before.hit, miss: after.miss - before.miss };
  const searchCache = searchCacheResult(
    prep.workloads.find((w) => w.name === 'realistic'),
    workloads,
    lookups,
    from,
    to,
  );
  const ratios: SuiteResult['ratios'] = {};
  for (const w of workloads) {
    const rps = (x: TargetName): number | null => w.targets[x]?.full.median.rps ?? null;
    const ours = rps('ours')!;
    const b = rps('baseline');
    const c = rps('ceiling');
    ratios[w.name] = { ours_baseline: b === null ? null : ours / b, ours_ceiling: c === null ? null : ours / c };
  }
  return {
    verification,
    workloads,
    memory,
    ratios,
    searchCache,
    checks: checksOf(workloads, ratios, memory),
    baselineText: t.baselineText,
  };
}

function workloadResult(w: Workload, full: Map<string, WrkRun[]>, open: OpenLoopLevel[]): WorkloadResult {
  const targets: WorkloadResult['targets'] = {};
  const skipped: WorkloadResult['skipped'] = {};
  for (const t of w.targets) {
    const runs = full.get(`${w.name}/${t}`);
    if (runs !== undefined) targets[t] = { full: { runs, median: summarize(runs) } };
  }
  if (!w.baseline) skipped.baseline = w.baselineSkipped ?? 'the baseline (reference architecture replica) does not implement it';
  return { name: w.name, title: w.title, urls: w.urls.length, distinct_urls: new Set(w.urls).size, targets, skipped, open_loop: open };
}

function searchCacheResult(
  w: Workload | undefined,
  workloads: readonly WorkloadResult[],
  lookups: { hit: number; miss: number } | null,
  from: number,
  to: number,
): SearchCacheResult {
  const { declared, defaultMb } = searchCacheSetting();
  const uncached_note = declared
    ? `ours ran with ${SEARCH_CACHE}=0 (search response cache off): every search response computed`
    : `this build declares no ${SEARCH_CACHE} (it has no search response cache): every search response computed (ours was started with ${SEARCH_CACHE}=0 all the same)`;
  if (w?.realistic === undefined) return { setting: SEARCH_CACHE, declared, default_mb: defaultMb, uncached_note, realistic: null };
  const n = (lookups?.hit ?? 0) + (lookups?.miss ?? 0);
  const bytes = workloads.find((x) => x.name === 'realistic')?.targets.ours_cached?.full.median.bytes_per_response ?? 0;
  const capacity = defaultMb === null || bytes <= 0 ? 0 : Math.floor((defaultMb * MIB) / bytes);
  const estimated = capacity === 0 || to <= from ? null : lruHits(w.urls, from, to, capacity) / (to - from);
  return {
    setting: SEARCH_CACHE,
    declared,
    default_mb: defaultMb,
    uncached_note,
    realistic: {
      universe: w.realistic.universe,
      requests_in_file: w.urls.length,
      distinct_in_file: w.realistic.distinctInSequence,
      zipf_exponent: w.realistic.zipfExponent,
      weighting:
        'each (ZIP, county) with plans weighted by its HUD residential ratio (no population file in ../shared/data: a county weighs its residential ZIP-equivalents; PO-box and business-only ZIPs are never drawn)',
      requests_measured: to - from,
      hit_rate_measured: n > 0 ? lookups!.hit / n : null,
      lookups_measured: n,
      hit_rate_estimated: estimated,
      estimate_basis:
        capacity === 0
          ? `no estimate: ${declared ? 'no response size measured' : `no ${SEARCH_CACHE} declared`}`
          : `LRU of ${capacity.toLocaleString('en-US')} responses (${defaultMb} MiB ÷ ${(bytes / 1024).toFixed(1)} KiB, the mean response on the wire) over the ${(to - from).toLocaleString('en-US')} measured requests, warmed by those before`,
    },
  };
}

function checksOf(workloads: readonly WorkloadResult[], ratios: SuiteResult['ratios'], memory: SuiteResult['memory']): Check[] {
  const checks: Check[] = [];
  const check = (
    id: string,
    description: string,
    value: number | null | undefined,
    direction: '>=' | '<=',
    target: number,
    unit: string,
  ): void => {
    if (value === null || value === undefined || !Number.isFinite(value)) return;
    checks.push({ id, description, value, target, unit, direction, met: direction === '>=' ? value >= target : value <= target });
  };
  check('search_vs_baseline', 'search requests/s, ours ÷ baseline', ratios.search?.ours_baseline, '>=', 10, '×');
  check(
    'search_vs_ceiling',
    'search requests/s with every response computed (search cache off), ours ÷ ceiling',
    ratios.search?.ours_ceiling,
    '>=',
    0.5,
    '×',
  );
  // The floors; bench/tail.bench.ts checks the same per core in both worker modes.
  check('years_vs_ceiling', 'years requests/s, ours ÷ ceiling', ratios.years?.ours_ceiling, '>=', 0.9, '×');
  check('detail_vs_ceiling', 'detail requests/s, ours ÷ ceiling', ratios.detail?.ours_ceiling, '>=', 0.8, '×');
  check('aptc_vs_ceiling', 'aptc requests/s, ours ÷ ceiling', ratios.aptc?.ours_ceiling, '>=', 0.5, '×');
  // A three-member household search costs at most a quarter more than a single-age one.
  const rpsOf = (name: WorkloadName): number | undefined => workloads.find((w) => w.name === name)?.targets.ours?.full.median.rps;
  const household = rpsOf('household');
  const single = rpsOf('search');
  check(
    'household_vs_search',
    'three-member household search requests/s ÷ single-age search requests/s, ours',
    household === undefined || single === undefined ? null : household / single,
    '>=',
    0.8,
    '×',
  );
  for (const w of workloads) {
    const at = w.open_loop.find((x) => x.level === P99_RATIO_LEVEL);
    check(
      `open_loop_p99_${w.name}`,
      `${w.name} p99 at 80 % of our max rate (open loop), ours ÷ ceiling`,
      at?.p99_ratio,
      '<=',
      P99_RATIO_TARGET,
      '×',
    );
  }
  const errors = workloads.reduce(
    (s, w) =>
      s +
      Object.values(w.targets).reduce((a, t) => a + t.full.median.errors, 0) +
      w.open_loop.reduce((a, x) => a + Object.values(x.targets).reduce((b, t) => b + t.median.errors, 0), 0),
    0,
  );
  check('zero_errors', 'errors (non-2xx and socket errors), all targets and runs', errors, '<=', 0, '');
  check('rss', 'peak RSS of ours (VmHWM) serving the dataset', memory.ours == null ? null : memory.ours.hwm_bytes / MIB, '<=', 400, 'MiB');
  return checks;
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}
