/**
 * @module The benchmark suite in one run: micro-benchmarks, then load runs against three targets on the
 * same machine, alternated, so that the noise of a shared machine hits all of them alike.
 *
 * 1. Open the build (the national PY2025 build by default; built first when missing) in this process;
 *    run the micro-benchmarks; draw the workloads from it.
 * 2. Start the targets, each pinned to the server core: **ours** (`hpd serve`, one process, an
 *    enterprise key made by `hpd keys create`), **baseline** (Hono + SQLite over the same build,
 *    bench/baseline) and, after every workload URL has been fetched from ours and compared field by
 *    field with the baseline's answer, **ceiling** (bare uWS replaying our recorded bytes).
 * 3. Full load: for each repetition, each workload, each target in turn: one wrk run.
 * 4. 80 % load: the same, paced to 80 % of our median full-load rate for that workload.
 * 5. Medians of the repetitions, ratios, memory, and the checks against the targets of the issue.
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
import { openRegistry, yearsWithBuilds } from '../../src/operations/data-registry.ts';
import { runMicro, type MicroResult } from './micro.ts';
import { childEnv, detectPinning, freePorts, memoryOf, spawnServer, type Memory, type Pinning, type ServerProcess } from './processes.ts';
import { median, MIB } from './util.ts';
import { fetchResponse, jsonDiff, mapLimit } from './verify.ts';
import { buildWorkloads, type Workload, type WorkloadName } from './workloads.ts';
import { runWrk, wrkVersion, type WrkRun } from './wrk.ts';

export type TargetName = 'ours' | 'baseline' | 'ceiling';
export const TARGETS: readonly TargetName[] = ['ours', 'baseline', 'ceiling'];

export interface SuiteOptions {
  readonly mode: 'full' | 'short';
  /** Builds root holding `<year>/current`; default: HPD_DATA_DIR or data/builds, built when missing. */
  readonly buildsRoot?: string;
  readonly year: number;
  readonly durationS: number;
  readonly reps: number;
  readonly connections: number;
  /** Workloads that get the 80 % runs. */
  readonly paced: readonly WorkloadName[];
  /** Calibration passes of the paced connection count (0 = computed from the rate alone). */
  readonly calibrations: number;
  /** One warm-up run per target and workload before measuring. */
  readonly warmup: boolean;
  readonly urlsPerWorkload: number;
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

export interface PacedResult extends LoadResult {
  readonly target_rps: number;
  readonly pace_ms: number;
}

export interface WorkloadResult {
  readonly name: WorkloadName;
  readonly title: string;
  readonly urls: number;
  readonly targets: Partial<Record<TargetName, { full: LoadResult; paced: PacedResult | null }>>;
  /** Why a target did not run this workload. */
  readonly skipped: Partial<Record<TargetName, string>>;
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

export interface SuiteResult {
  readonly schema: 1;
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
  readonly dataset: { readonly year: number; readonly build_hash: string; readonly plans: number; readonly zips: number; readonly data_source: string; readonly dir: string };
  readonly settings: {
    readonly duration_s: number;
    readonly reps: number;
    readonly connections: number;
    readonly pacing: string;
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
  readonly memory: Record<TargetName, { readonly idle: Memory | null; readonly rss_max_bytes: number; readonly hwm_bytes: number; readonly end: Memory } | null>;
  readonly ratios: Partial<Record<WorkloadName, { readonly ours_baseline: number | null; readonly ours_ceiling: number | null }>>;
  readonly checks: Check[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(ROOT, 'bin/hpd.js');
const BASE_URL = 'https://api.bench.test';
/** High enough that the daily quota never refuses a benchmark request. */
const QUOTA = '1000000000000';
const PACE_MS = 5;

/** The builds root to serve: the given one, or the default with the national build made when missing. */
export async function ensureBuild(year: number, root: string | undefined, log: (l: string) => void): Promise<string> {
  if (root !== undefined) return root;
  const dir = defaultBuildsRoot();
  if (!yearsWithBuilds(dir).includes(year)) {
    log(`no PY${year} build under ${dir}: building the national dataset (about 15 s)`);
    await buildDataset({ year, root: REPO_ROOT, buildsRoot: dir, cacheDir: cacheRoot(), offline: true, progress: createProgress({ tty: false, quiet: true }) });
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

export async function runSuite(o: SuiteOptions): Promise<SuiteResult> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const wrk = wrkVersion();
  if (wrk === null) throw new Error('wrk is not installed: apt-get install -y wrk (Debian package), then run again');
  const pinning = detectPinning();
  const serverCpu = pinning?.serverCpu ?? null;
  const generatorCpu = pinning?.generatorCpu ?? null;
  const log = o.log;

  // 1. The build, pinned: a private builds root whose <year>/current names today's build directory, so
  //    every target serves the same build even if data/builds is rebuilt meanwhile.
  const sourceRoot = await ensureBuild(o.year, o.buildsRoot, log);
  const buildDir = realpathSync(join(sourceRoot, String(o.year), 'current'));
  const work = mkdtempSync(join(tmpdir(), 'hpd-bench-'));
  const servers: ServerProcess[] = [];
  try {
    const root = join(work, 'builds');
    mkdirSync(join(root, String(o.year)), { recursive: true });
    symlinkSync(buildDir, join(root, String(o.year), 'current'));
    const registry = openRegistry(root, BASE_URL, [o.year]);
    const yd = registry.get(o.year)!;
    const ctx = { registry, baseUrl: BASE_URL };
    log(`build ${yd.ds.buildHash.slice(0, 12)} (PY${o.year}, ${yd.ds.planCount} plans, ${yd.ds.zipCount} ZIPs, ${yd.ds.manifest.data_source}) from ${buildDir}`);

    if (o.microTimeMs > 0) log(`micro-benchmarks (tinybench, ${o.microTimeMs} ms per task)`);
    const micro = o.microTimeMs > 0 ? await runMicro(yd, ctx, o.microTimeMs) : [];
    const workloads = buildWorkloads(yd, ctx, o.urlsPerWorkload).filter((w) => o.workloads === undefined || o.workloads.includes(w.name));
    const dataset = { year: o.year, build_hash: yd.ds.buildHash, plans: yd.ds.planCount, zips: yd.ds.zipCount, data_source: yd.ds.manifest.data_source, dir: buildDir };
    registry.close();
    const urlFiles = new Map<WorkloadName, string>();
    for (const w of workloads) {
      const f = join(work, `${w.name}.urls`);
      writeFileSync(f, `${w.urls.join('\n')}\n`);
      urlFiles.set(w.name, f);
    }

    // 2. Targets. The key is made the way an operator makes one; the baseline stores its hash.
    const stateDir = join(work, 'state');
    // Search pages computed for every request (the issue's uncached figure) unless HPD_SEARCH_CACHE_MB says otherwise.
    const hpdEnv = childEnv({ HPD_DATA_DIR: root, HPD_STATE_DIR: stateDir, HPD_CACHE_DIR: join(work, 'cache'), HPD_QUOTA_FREE: QUOTA, HPD_QUOTA_PRO: QUOTA, HPD_QUOTA_ENTERPRISE: QUOTA, HPD_SEARCH_CACHE_MB: process.env.HPD_SEARCH_CACHE_MB ?? '0' });
    const made = spawnSync(process.execPath, [HPD, 'keys', 'create', '--tier', 'enterprise', '--label', 'load benchmark'], { cwd: ROOT, env: hpdEnv, encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`hpd keys create failed: ${made.stderr.trim()}`);
    const key = made.stdout.trim();
    const auth = { authorization: `Bearer ${key}` };
    const [restPort, mcpPort, authPort, baselinePort, ceilingPort] = (await freePorts(5)) as [number, number, number, number, number];

    log('starting ours (hpd serve) and loading the baseline database (SQLite)');
    const tsHooks = ['--import', join(ROOT, 'bin/register-typescript.js')];
    const dbPath = join(work, 'baseline.db');
    const [ours, baselineLoad] = await Promise.all([
      spawnServer({
        name: 'ours',
        command: process.execPath,
        // Pinned to one core beside the load generator: REST in the main thread, as the earlier runs
        // measured (one worker would add a second copy of the dataset for no extra core); the worker
        // configurations are measured by bench/workers.bench.ts.
        args: [...(o.profileDir !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : []), HPD, 'serve', '--workers', '0'],
        env: { ...hpdEnv, HPD_HOST: '127.0.0.1', HPD_PORT: String(restPort), HPD_MCP_PORT: String(mcpPort), HPD_AUTH_PORT: String(authPort), HPD_BASE_URL: BASE_URL },
        cwd: ROOT,
        port: restPort,
        cpu: serverCpu,
        readyUrl: `http://127.0.0.1:${restPort}/readyz`,
      }),
      new Promise<{ rates: number; plans: number; load_ms: number }>((resolve, reject) => {
        const keyHash = createHash('sha256').update(key).digest('hex');
        const r = spawnSync(process.execPath, [...tsHooks, join(ROOT, 'bench/baseline/load.ts'), buildDir, dbPath, keyHash], { cwd: ROOT, env: childEnv({}), encoding: 'utf8', maxBuffer: 1 << 20 });
        if (r.status !== 0) reject(new Error(`baseline load failed: ${r.stderr.trim()}`));
        else resolve(JSON.parse(r.stdout) as { rates: number; plans: number; load_ms: number });
      }),
    ]);
    servers.push(ours);
    const oursIdle = memoryOf(ours.pid);
    log(`baseline database: ${baselineLoad.rates} rate rows, ${baselineLoad.plans} plan variants in ${(baselineLoad.load_ms / 1000).toFixed(1)} s`);
    const baseline = await spawnServer({
      name: 'baseline',
      command: process.execPath,
      args: [...tsHooks, join(ROOT, 'bench/baseline/server.ts'), dbPath, String(baselinePort), BASE_URL],
      env: childEnv({ HPD_QUOTA_ENTERPRISE: QUOTA }),
      cwd: ROOT,
      port: baselinePort,
      cpu: serverCpu,
    });
    servers.push(baseline);
    const baselineIdle = memoryOf(baseline.pid);

    // Record our answer to every URL; compare the baseline's field by field.
    const origin = (port: number): string => `http://127.0.0.1:${port}`;
    const recorded: Record<string, { status: string; headers: Array<[string, string]>; body: string }> = {};
    const compared: Record<string, number> = {};
    const mismatches: SuiteResult['verification']['mismatches'] = [];
    for (const w of workloads) {
      const urls = [...new Set(w.urls)];
      await mapLimit(urls, 8, async (url) => {
        const r = await fetchResponse(origin(restPort), url, auth);
        if (r.status !== 200) throw new Error(`ours answered ${r.status} to ${url}: ${r.body.slice(0, 300)}`);
        recorded[url] = { status: `${r.status} ${r.statusText}`, headers: r.headers, body: r.body };
        if (!w.baseline) return;
        const b = await fetchResponse(origin(baselinePort), url, auth);
        const diffs = b.status !== 200 ? [`status ${b.status}: ${b.body.slice(0, 200)}`] : jsonDiff(JSON.parse(r.body), JSON.parse(b.body));
        if (diffs.length > 0) mismatches.push({ url, target: 'baseline', diffs });
        compared[w.name] = (compared[w.name] ?? 0) + 1;
      });
    }
    const responsesFile = join(work, 'ceiling.json');
    writeFileSync(responsesFile, JSON.stringify(recorded));
    const ceiling = await spawnServer({
      name: 'ceiling',
      command: process.execPath,
      args: [...tsHooks, join(ROOT, 'bench/ceiling/server.ts'), responsesFile, String(ceilingPort)],
      env: childEnv({}),
      cwd: ROOT,
      port: ceilingPort,
      cpu: serverCpu,
    });
    servers.push(ceiling);
    const ceilingIdle = memoryOf(ceiling.pid);
    await mapLimit(Object.keys(recorded), 8, async (url) => {
      const c = await fetchResponse(origin(ceilingPort), url, auth);
      if (c.body !== recorded[url]!.body) mismatches.push({ url, target: 'ceiling', diffs: ['body bytes differ from ours'] });
      compared.ceiling = (compared.ceiling ?? 0) + 1;
    });
    const verification = { compared, mismatches, ok: mismatches.length === 0 };
    log(`verified: ${Object.entries(compared).map(([k, v]) => `${k} ${v}`).join(', ')} responses compared, ${mismatches.length} mismatches`);
    if (!verification.ok) {
      for (const m of mismatches.slice(0, 10)) log(`  MISMATCH ${m.target} ${m.url}\n    ${m.diffs.join('\n    ')}`);
      throw new Error(`${mismatches.length} responses differ between ours and ${[...new Set(mismatches.map((m) => m.target))].join(' and ')}; see above`);
    }

    const byName: Record<TargetName, ServerProcess> = { ours, baseline, ceiling };
    const memIdle: Record<TargetName, Memory | null> = { ours: oursIdle, baseline: baselineIdle, ceiling: ceilingIdle };
    const memMax: Record<TargetName, number> = { ours: 0, baseline: 0, ceiling: 0 };
    const sampleMemory = (): void => {
      for (const t of TARGETS) {
        const m = memoryOf(byName[t].pid);
        if (m !== null) memMax[t] = Math.max(memMax[t], m.rss_bytes);
      }
    };
    const runOn = async (t: TargetName, w: Workload, connections: number, paceMs: number, durationS: number): Promise<WrkRun> => {
      const r = await runWrk({ origin: origin(byName[t].port), urlsFile: urlFiles.get(w.name)!, headers: [`Authorization: Bearer ${key}`], connections, durationS, paceMs, cpu: generatorCpu });
      sampleMemory();
      return r;
    };
    const runsOf = (w: Workload): TargetName[] => TARGETS.filter((t) => t !== 'baseline' || w.baseline);

    if (o.warmup) {
      log('warm-up: 1 s per target and workload');
      for (const w of workloads) for (const t of runsOf(w)) await runOn(t, w, o.connections, 0, 1);
    }

    // 3. Full load, alternating targets.
    const full = new Map<string, WrkRun[]>();
    for (let rep = 0; rep < o.reps; rep++) {
      for (const w of workloads) {
        for (const t of runsOf(w)) {
          const r = await runOn(t, w, o.connections, 0, o.durationS);
          const k = `${w.name}/${t}`;
          full.set(k, [...(full.get(k) ?? []), r]);
          log(`full  ${rep + 1}/${o.reps} ${w.name.padEnd(6)} ${t.padEnd(8)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.latency_ms.p50.toFixed(2)} ms  p99 ${r.latency_ms.p99.toFixed(2)} ms  errors ${r.errors.total}`);
        }
      }
    }

    // 4. 80 % of our full-load rate, paced by think time; the connection count calibrated on ours.
    const pacedSetup = new Map<WorkloadName, { target: number; connections: number }>();
    for (const w of workloads.filter((x) => o.paced.includes(x.name))) {
      const target = 0.8 * summarize(full.get(`${w.name}/ours`)!).rps;
      let connections = Math.max(1, Math.round((target * (PACE_MS + 0.3)) / 1000));
      for (let i = 0; i < o.calibrations; i++) {
        const r = await runOn('ours', w, connections, PACE_MS, 1);
        connections = Math.max(1, Math.min(2000, Math.round((connections * target) / Math.max(1, r.rps))));
      }
      pacedSetup.set(w.name, { target, connections });
    }
    const paced = new Map<string, WrkRun[]>();
    for (let rep = 0; rep < o.reps; rep++) {
      for (const w of workloads) {
        const setup = pacedSetup.get(w.name);
        if (setup === undefined) continue;
        for (const t of runsOf(w)) {
          const r = await runOn(t, w, setup.connections, PACE_MS, o.durationS);
          const k = `${w.name}/${t}`;
          paced.set(k, [...(paced.get(k) ?? []), r]);
          log(`80 %  ${rep + 1}/${o.reps} ${w.name.padEnd(6)} ${t.padEnd(8)} ${r.rps.toFixed(0).padStart(7)} req/s (offered ≈ ${setup.target.toFixed(0)})  p50 ${r.latency_ms.p50.toFixed(2)} ms  p99 ${r.latency_ms.p99.toFixed(2)} ms  errors ${r.errors.total}`);
        }
      }
    }

    const memory = {} as SuiteResult['memory'];
    for (const t of TARGETS) {
      const m: Memory | null = memoryOf(byName[t].pid);
      memory[t] = m === null ? null : { idle: memIdle[t], rss_max_bytes: Math.max(memMax[t], m.rss_bytes), hwm_bytes: m.hwm_bytes, end: m };
    }
    for (const s of servers.splice(0).reverse()) await s.stop();

    // 5. Results.
    const workloadResults: WorkloadResult[] = workloads.map((w) => {
      const targets: WorkloadResult['targets'] = {};
      const skipped: WorkloadResult['skipped'] = {};
      for (const t of TARGETS) {
        const runs = full.get(`${w.name}/${t}`);
        if (runs === undefined) {
          skipped[t] = 'the baseline (reference architecture replica) has no APTC endpoint';
          continue;
        }
        const p = paced.get(`${w.name}/${t}`);
        const setup = pacedSetup.get(w.name);
        targets[t] = {
          full: { runs, median: summarize(runs) },
          paced: p === undefined || setup === undefined ? null : { runs: p, median: summarize(p), target_rps: setup.target, pace_ms: PACE_MS },
        };
      }
      return { name: w.name, title: w.title, urls: w.urls.length, targets, skipped };
    });
    const ratios: SuiteResult['ratios'] = {};
    for (const w of workloadResults) {
      const rps = (t: TargetName): number | null => w.targets[t]?.full.median.rps ?? null;
      const ours = rps('ours')!;
      const b = rps('baseline');
      const c = rps('ceiling');
      ratios[w.name] = { ours_baseline: b === null ? null : ours / b, ours_ceiling: c === null ? null : ours / c };
    }
    const checks: Check[] = [];
    const check = (id: string, description: string, value: number | null | undefined, direction: '>=' | '<=', target: number, unit: string): void => {
      if (value === null || value === undefined || !Number.isFinite(value)) return;
      checks.push({ id, description, value, target, unit, direction, met: direction === '>=' ? value >= target : value <= target });
    };
    const searchW = workloadResults.find((w) => w.name === 'search');
    check('search_vs_baseline', 'search requests/s, ours ÷ baseline', ratios.search?.ours_baseline, '>=', 10, '×');
    check('search_vs_ceiling', 'search requests/s, ours ÷ ceiling', ratios.search?.ours_ceiling, '>=', 0.5, '×');
    check('years_vs_ceiling', 'years requests/s, ours ÷ ceiling', ratios.years?.ours_ceiling, '>=', 0.8, '×');
    check('search_p99_at_80', 'search p99 at 80 % of our max rate (ours)', searchW?.targets.ours?.paced?.median.p99_ms, '<=', 2, 'ms');
    const errors = workloadResults.reduce((s, w) => s + Object.values(w.targets).reduce((a, t) => a + t.full.median.errors + (t.paced?.median.errors ?? 0), 0), 0);
    check('zero_errors', 'errors (non-2xx and socket errors), all targets and runs', errors, '<=', 0, '');
    check('rss', 'peak RSS of ours (VmHWM) serving the dataset', memory.ours === null ? null : memory.ours.hwm_bytes / MIB, '<=', 400, 'MiB');

    const cpu = cpus()[0]?.model ?? 'unknown';
    return {
      schema: 1,
      mode: o.mode,
      started_at: startedAt,
      wall_seconds: (performance.now() - t0) / 1000,
      machine: { node: process.version, cpus: cpus().length, cpu_model: cpu, pinning, load_generator: `${wrk} (Debian package), 1 thread`, loadavg_start: loadStart, loadavg_end: loadavg() },
      dataset,
      settings: {
        duration_s: o.durationS,
        reps: o.reps,
        connections: o.connections,
        pacing: `wrk Lua delay(): random think time per request, uniform 0–${2 * PACE_MS} ms (mean ${PACE_MS} ms), connection count calibrated on ours to 80 % of our median full-load rate (closed loop; latency measured from send)`,
        urls_per_workload: o.urlsPerWorkload,
        baseline: `Hono ${packageVersion('hono')} on @hono/node-server ${packageVersion('@hono/node-server')}, better-sqlite3 ${packageVersion('better-sqlite3')} (SQLite, WAL, synchronous=NORMAL), loaded from the same build: ${baselineLoad.rates} rate rows, ${baselineLoad.plans} plan variants`,
      },
      micro,
      verification,
      workloads: workloadResults,
      memory,
      ratios,
      checks,
    };
  } finally {
    for (const s of servers.reverse()) await s.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}
