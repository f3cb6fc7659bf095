/**
 * @module `npm run bench:tail`: the figures per core, in the configuration users run as well as
 * with REST in the main thread. `npm run bench` runs it after the suite in a complete full run.
 *
 * Two servers on the national build, each with all of its threads pinned to the server core, next to
 * the ceiling (bare uWS replaying their bytes) on the same core; wrk and wrk2 on the other core:
 * - **workers 0**: `hpd serve --workers 0`, REST in the main thread;
 * - **workers 1**: `hpd serve --workers 1`, the default worker mode with one core's worth of workers.
 * Both run with the search cache off (every search computed) and under V8's `--trace-gc-nvp`, whose
 * lines give the bytes allocated per request and the mark-compacts of every thread (bench/lib/gc-trace.ts).
 *
 * 1. Closed loop (wrk, 64 connections, 3 × 4 s, targets alternated): requests/s ÷ the ceiling's, and
 *    bytes allocated per request, for search, household search (also ÷ single-age search),
 *    detail, years and APTC. Each run also reads every thread's CPU, context switches and migrations
 *    from /proc before and after (bench/lib/proc-stats.ts); then, for search and APTC, one extra run of
 *    each server under strace counts its syscalls, socket sends and bytes per request
 *    (bench/lib/syscall-profile.ts): the table "Per request, what the kernel sees". Then where a
 *    search's CPU goes: a third server, ours with the search cache on and every URL kept, beside workers
 *    0 and the ceiling (bench/lib/search-budget.ts): the pipeline's cost over the ceiling, the search's,
 *    and what the requests/s target leaves for the search once the pipeline is paid.
 * 2. Open loop (wrk2) at 80 % of each server's own median rate, the ceiling at the same rate: p99 ÷ the
 *    ceiling's p99, for search, detail and APTC (3 × 4 s).
 * 3. One 30 s open-loop search run at 80 % per server, then the ceiling for 30 s at the same rate: the
 *    p99 ratio over a long run (≤ 1.5) and the mark-compacts during it. A pair that misses is run twice
 *    more and judged on the medians (bench/lib/judged-pairs.ts), as every sustained-rate step is.
 * 4. Sustained search rate per server: the highest of 50/65/80/90/100/110 % of its median rate at which
 *    its p99 stays ≤ 2× the ceiling's (bench/lib/sustained-rate.ts), each step judged like the long run.
 * 5. The same sustained rate for `--workers 1` and `--workers 2` unpinned on the whole box (the load
 *    generator shares its cores), next to the ceiling unpinned: the scaling figure of a host.
 * 6. bench:cache-sensitivity on the server core once the servers are stopped: what other memory traffic
 *    between requests adds to ours' handler and to the ceiling's (bench/cache-sensitivity.bench.ts).
 * Results: stdout and, for a full run, bench/results/tail.{json,md}. Exit 1 when a target is missed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import { benchArgs } from './lib/bench-args.ts';
import { searchCacheLookups } from './lib/cache-lookups.ts';
import { coreShares, coreTicks } from './lib/core-time.ts';
import { GcTrace } from './lib/gc-trace.ts';
import { type KernelWorkload, kernelTable } from './lib/kernel-report.ts';
import {
  benchServeEnv,
  childEnv,
  detectPinning,
  enterpriseKey,
  freePorts,
  HPD,
  pinnedCommand,
  type ServerProcess,
  spawnHpdServe,
  spawnServer,
} from './lib/processes.ts';
import { type PerRequestStats, perRequest, type Resident, resident, snapshot } from './lib/proc-stats.ts';
import { ensureBuild } from './lib/suite.ts';
import { type NotProfiled, type SyscallProfile, syscallProfile } from './lib/syscall-profile.ts';
import { judgedPairs, runsText } from './lib/judged-pairs.ts';
import { type CpuPerRequest, budgetText, searchBudget, type SearchBudget } from './lib/search-budget.ts';
import { sustainedRate, type SustainedRate } from './lib/sustained-rate.ts';
import { fmtRate, median } from './lib/util.ts';
import { fetchResponse, mapLimit } from './lib/verify.ts';
import { buildWorkloads, type WorkloadName } from './lib/workloads.ts';
import { requireWrk, runWrk, type WrkRun } from './lib/wrk.ts';
import { ensureWrk2 } from './lib/wrk2.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BASE_URL = 'http://bench.test';
const USAGE = `Usage: npm run bench:tail [-- options]

The figures per core: hpd serve --workers 0 and --workers 1 (every thread on the server core)
against the ceiling on the same core: requests/s ratios and bytes allocated per request (closed loop),
per request what the kernel sees (CPU, switches, migrations; syscalls, sends and bytes under strace),
p99 ratios at 80 % (open loop), mark-compacts in 30 s at 80 %, the sustained search rate, 1 vs 2
workers unpinned, and what other memory traffic between requests costs each handler
(bench:cache-sensitivity). About 15 minutes; needs wrk (wrk2 is built on first use) and strace.

Options:
  --short        1 s runs, one repetition, no warm-up, one sustained-rate step, a 1 s long run,
                 search alone traced (checks the harness: every table, no targets)
  --builds DIR   builds root holding 2025/current (default: data/builds, built when missing)
  --help         this text`;

const args = benchArgs('bench:tail', USAGE, { short: { type: 'boolean' }, builds: { type: 'string' } });
const short = args.short === true;
const DURATION_S = short ? 1 : 4;
const REPS = short ? 1 : 3;
const LONG_S = short ? 1 : 30;
/** The long run's target: ours' p99 over 30 s at most this many times the ceiling's. */
const LONG_FACTOR = 1.5;
const CONNECTIONS = 64;
const OPEN_LEVEL = 0.8;
/** Search's requests/s target, as a share of the ceiling's. */
const SEARCH_FLOOR = 0.5;
// --short checks the harness, not the figures: one step of the sustained-rate search is the same code
// path as six (the search's stopping rule has its own test).
const SUSTAIN_FRACTIONS = short ? [0.8] : [0.5, 0.65, 0.8, 0.9, 1.0, 1.1];
/** A 1 s warm-up run per target and workload before measuring (not in --short: no figure is kept). */
const WARMUP = !short;
const CLOSED: readonly WorkloadName[] = ['search', 'household', 'detail', 'years', 'aptc'];
/** The workloads of the kernel table; --short traces search only (the same code path, half the runs). */
const KERNEL: readonly WorkloadName[] = ['search', 'aptc'];
const TRACED: readonly WorkloadName[] = short ? ['search'] : KERNEL;
const NOT_TRACED = '--short traces search only';
/** Seconds of the strace -c run and of the send-family run per server and workload. */
const TRACE_COUNT_S = short ? 1 : 3;
const TRACE_SEND_S = short ? 1 : 2;
const OPEN: readonly WorkloadName[] = ['search', 'detail', 'aptc'];
const log = (line: string): void => void process.stderr.write(`bench:tail: ${line}\n`);

requireWrk(log);
const wrk2 = ensureWrk2(log);
const pinning = detectPinning();
const serverCpu = pinning?.serverCpu ?? null;
const generatorCpu = pinning?.generatorCpu ?? null;
const builds = await ensureBuild(2025, typeof args.builds === 'string' ? args.builds : undefined, log);
const work = mkdtempSync(join(tmpdir(), 'hpd-bench-tail-'));

/** A server under load: where it answers, the key it takes, its GC trace (null for the ceiling). */
interface Target {
  readonly name: string;
  readonly server: ServerProcess;
  readonly origin: string;
  readonly key: string;
  readonly trace: GcTrace | null;
}

const servers: ServerProcess[] = [];

async function startHpd(name: string, workers: number, cpu: number | null, extraEnv: Record<string, string> = {}): Promise<Target> {
  const env = benchServeEnv(builds, join(work, `state-${name}`), { HPD_SEARCH_CACHE_MB: '0', HPD_BASE_URL: BASE_URL, ...extraEnv });
  const key = enterpriseKey(env);
  const trace = new GcTrace();
  // stdbuf: V8 prints the trace through C stdio, block-buffered on a pipe; line buffering puts each GC
  // in the run it happened in.
  const { server, origin } = await spawnHpdServe({
    name,
    command: 'stdbuf',
    args: ['-oL', process.execPath, '--trace-gc-nvp', HPD, 'serve', '--workers', String(workers)],
    env,
    cwd: ROOT,
    cpu,
    onStdoutLine: trace.onLine,
  });
  servers.push(server);
  return { name, server, origin, key, trace };
}

async function startCeiling(responsesFile: string, cpu: number | null): Promise<Target> {
  const [port] = (await freePorts(1)) as [number];
  const server = await spawnServer({
    name: 'ceiling',
    command: process.execPath,
    args: ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/ceiling/server.ts'), responsesFile, String(port)],
    env: childEnv({}),
    cwd: ROOT,
    port,
    cpu,
  });
  servers.push(server);
  return { name: 'ceiling', server, origin: `http://127.0.0.1:${port}`, key: 'ceiling', trace: null };
}

const urlFiles = new Map<WorkloadName, string>();
const verifyUrls: string[] = [];
{
  const registry = openRegistry(builds, BASE_URL);
  try {
    for (const w of buildWorkloads(registry.get(2025)!, { registry, baseUrl: BASE_URL }, short ? 40 : 1000)) {
      if (!CLOSED.includes(w.name)) continue;
      const file = join(work, `${w.name}.urls`);
      writeFileSync(file, `${w.urls.join('\n')}\n`);
      urlFiles.set(w.name, file);
      verifyUrls.push(...w.verify);
    }
  } finally {
    registry.close();
  }
}

/** Records w0's answers for the ceiling and checks w1 sends the same bytes. */
async function record(w0: Target, w1: Target): Promise<string> {
  const recorded: Record<string, { status: string; headers: Array<[string, string]>; body: string }> = {};
  await mapLimit(verifyUrls, 8, async (url) => {
    const a = await fetchResponse(w0.origin, url, { authorization: `Bearer ${w0.key}` });
    const b = await fetchResponse(w1.origin, url, { authorization: `Bearer ${w1.key}` });
    if (a.status !== 200) throw new Error(`workers 0 answered ${a.status} to ${url}`);
    if (b.status !== 200 || b.body !== a.body) throw new Error(`workers 1 answered ${url} with other bytes than workers 0`);
    recorded[url] = { status: `${a.status} ${a.statusText}`, headers: a.headers, body: a.body };
  });
  const file = join(work, 'ceiling.json');
  writeFileSync(file, JSON.stringify(recorded));
  log(`recorded ${verifyUrls.length} responses; workers 1 sent the same bytes for each`);
  return file;
}

const offsets = new Map<string, number>();

/** One wrk (closed loop) or wrk2 (`rate`) run of a workload; `generator` null: unpinned. */
async function load(t: Target, w: WorkloadName, durationS: number, rate?: number, generator = generatorCpu): Promise<WrkRun> {
  const k = `${t.name}/${w}`;
  const r = await runWrk({
    origin: t.origin,
    urlsFile: urlFiles.get(w)!,
    headers: [`Authorization: Bearer ${t.key}`],
    connections: CONNECTIONS,
    durationS,
    paceMs: 0,
    cpu: generator,
    offset: offsets.get(k) ?? 0,
    ...(rate === undefined ? {} : { rate, binary: wrk2 }),
  });
  offsets.set(k, (offsets.get(k) ?? 0) + r.requests);
  if (r.errors.total > 0) throw new Error(`${t.name} ${w}: ${r.errors.total} errors`);
  return r;
}

/** What a figure of the report reads when its runs did not measure it. */
const NOT_MEASURED = 'not measured (no collection during the runs)';

/** Median bytes allocated per request of the runs that measured it, or why there is none. */
function allocText(runs: readonly number[]): string {
  return runs.length === 0 ? NOT_MEASURED : String(Math.round(median(runs)));
}

interface Closed {
  rps: number[];
  bytesPerRequest: number[];
  scavengesPer1k: number[];
  markCompacts: number;
  /** CPU, switches and migrations of every thread per request, one entry per run. */
  kernel: PerRequestStats[];
  /** The traced runs (KERNEL workloads only; null when not traced). */
  syscalls: SyscallProfile | NotProfiled | null;
}

async function closedLoop(targets: readonly Target[]): Promise<Map<string, Closed>> {
  const out = new Map<string, Closed>();
  for (let rep = 0; rep < REPS; rep++) {
    for (const w of CLOSED) {
      for (const t of targets) {
        const mark = t.trace?.mark() ?? 0;
        const before = snapshot(t.server.pid);
        const r = await load(t, w, DURATION_S);
        const after = snapshot(t.server.pid);
        const c = out.get(`${t.name}/${w}`) ?? {
          rps: [],
          bytesPerRequest: [],
          scavengesPer1k: [],
          markCompacts: 0,
          kernel: [],
          syscalls: null,
        };
        c.rps.push(r.rps);
        c.kernel.push(perRequest(before, after, r.requests));
        if (t.trace !== null) {
          const g = t.trace.summary(mark);
          // V8 reports allocation at each collection: a run without one measured nothing (a short run
          // on a slow machine), which is not the same as allocating nothing.
          if (g.scavenges + g.markCompacts > 0) c.bytesPerRequest.push(g.bytes / r.requests);
          c.scavengesPer1k.push((g.scavenges * 1000) / r.requests);
          c.markCompacts += g.markCompacts;
        }
        out.set(`${t.name}/${w}`, c);
        log(
          `closed ${rep + 1}/${REPS} ${w.padEnd(6)} ${t.name.padEnd(9)} ${fmtRate(r.rps)}/s${t.trace === null ? '' : `, ${allocText(c.bytesPerRequest)} B/request`}`,
        );
      }
    }
  }
  // Separate runs under strace (far slower): per-request counts only, after the timed runs.
  for (const w of TRACED) {
    for (const t of targets) {
      const c = out.get(`${t.name}/${w}`)!;
      c.syscalls = await syscallProfile({
        pid: t.server.pid,
        load: async (seconds) => (await load(t, w, seconds)).requests,
        countSeconds: TRACE_COUNT_S,
        sendSeconds: TRACE_SEND_S,
        dir: work,
      });
      const s = c.syscalls;
      log(
        `strace ${w.padEnd(6)} ${t.name.padEnd(9)} ${'unavailable' in s ? s.unavailable : `${s.syscalls.toFixed(2)} syscalls, ${s.sendCalls.toFixed(2)} sends, ${s.bytes.toFixed(0)} B/request`}`,
      );
    }
  }
  return out;
}

/**
 * Where a search's CPU goes (bench/lib/search-budget.ts): ours answering every search from the search
 * cache (the pipeline alone), ours computing every search (workers 0) and the ceiling, alternated on
 * the server core over the same URLs.
 */
async function budget(computed: Target, ceiling: Target): Promise<{ budget: SearchBudget; hitRate: number | null }> {
  const [metricsPort] = (await freePorts(1)) as [number];
  const cached = await startHpd('search-cached', 0, serverCpu, { HPD_SEARCH_CACHE_MB: '64', HPD_METRICS_PORT: String(metricsPort) });
  try {
    // A page is kept from its second sighting: a run of many passes over the URL list fills the cache.
    await load(cached, 'search', 2);
    // A hit rate that cannot be read is reported as such; the CPU figures stand without it.
    const lookups = (): Promise<{ hit: number; miss: number } | null> => searchCacheLookups(metricsPort).catch(() => null);
    const before = await lookups();
    const sides = [
      ['ceiling', ceiling],
      ['cached', cached],
      ['computed', computed],
    ] as const;
    const runs = new Map<string, PerRequestStats[]>(sides.map(([k]) => [k, []]));
    for (let rep = 0; rep < REPS; rep++) {
      for (const [k, t] of sides) {
        const start = snapshot(t.server.pid);
        const r = await load(t, 'search', DURATION_S);
        runs.get(k)!.push(perRequest(start, snapshot(t.server.pid), r.requests));
        log(`budget ${rep + 1}/${REPS} ${k.padEnd(8)} ${fmtRate(r.rps)}/s`);
      }
    }
    const after = await lookups();
    const cpu = (k: string): CpuPerRequest => {
      const r = runs.get(k)!;
      return { userUs: median(r.map((x) => x.userUs)), sysUs: median(r.map((x) => x.sysUs)) };
    };
    const counted = before === null || after === null ? 0 : after.hit + after.miss - before.hit - before.miss;
    return {
      budget: searchBudget(cpu('ceiling'), cpu('cached'), cpu('computed'), SEARCH_FLOOR),
      hitRate: counted === 0 ? null : (after!.hit - before!.hit) / counted,
    };
  } finally {
    await cached.server.stop();
  }
}

interface Open {
  rate: number;
  p99: number[];
  ceilingP99: number[];
}

async function openLoop(modes: readonly Target[], ceiling: Target, closed: Map<string, Closed>): Promise<Map<string, Open>> {
  const out = new Map<string, Open>();
  for (let rep = 0; rep < REPS; rep++) {
    for (const w of OPEN) {
      for (const t of modes) {
        const rate = OPEN_LEVEL * median(closed.get(`${t.name}/${w}`)!.rps);
        const c = await load(ceiling, w, DURATION_S, rate);
        const r = await load(t, w, DURATION_S, rate);
        const o = out.get(`${t.name}/${w}`) ?? { rate, p99: [], ceilingP99: [] };
        o.p99.push(r.latency_ms.p99);
        o.ceilingP99.push(c.latency_ms.p99);
        out.set(`${t.name}/${w}`, o);
        log(
          `open   ${rep + 1}/${REPS} ${w.padEnd(6)} ${t.name.padEnd(9)} ${fmtRate(rate)}/s: p99 ${r.latency_ms.p99.toFixed(2)} ms, ceiling ${c.latency_ms.p99.toFixed(2)} ms`,
        );
      }
    }
  }
  return out;
}

interface Long {
  rate: number;
  /** Ours' p99 over 30 s: the median of the runs (judged-pairs.ts: one run unless the first missed). */
  p99: number;
  /** The ceiling's p99 over the same time at the same rate, run right after each of ours': the median. */
  ceilingP99: number;
  /**
   * The slowest request of any run: a stall of the machine shows in the ceiling's too, while one of
   * ours alone is ours.
   */
  maxMs: number;
  ceilingMaxMs: number;
  /** The most in any one run. */
  markCompacts: number;
  /** The median over the runs. */
  scavenges: number;
  maxPauseMs: number;
  /** Every run's p99, ours and the ceiling's, with how busy ours kept the core and what was stolen from it. */
  runs: ReadonlyArray<LongRunShares & { readonly p99_ms: number; readonly ceiling_p99_ms: number }>;
}

/**
 * Of one 30 s run: ours' CPU (every thread) as a share of the run's wall time, and the share of the
 * server core's time stolen by the hypervisor during ours' run and during the ceiling's after it (the
 * whole machine's when unpinned).
 */
interface LongRunShares {
  readonly oursCpu: number;
  readonly stolen: number;
  readonly ceilingStolen: number;
}

/** What one 30 s run of ours and the ceiling's after it leave besides their p99s. */
interface LongPair extends LongRunShares {
  readonly maxMs: number;
  readonly ceilingMaxMs: number;
  readonly markCompacts: number;
  readonly scavenges: number;
  readonly maxPauseMs: number;
}

async function longRun(t: Target, ceiling: Target, closed: Map<string, Closed>): Promise<Long> {
  const rate = OPEN_LEVEL * median(closed.get(`${t.name}/search`)!.rps);
  const judged = await judgedPairs<LongPair>(
    async () => {
      const mark = t.trace!.mark();
      const core = coreTicks(serverCpu);
      const proc = snapshot(t.server.pid);
      const r = await load(t, 'search', LONG_S, rate);
      const k = perRequest(proc, snapshot(t.server.pid), r.requests);
      const stolen = coreShares(core, coreTicks(serverCpu)).steal;
      const g = t.trace!.summary(mark);
      const ceilingCore = coreTicks(serverCpu);
      const c = await load(ceiling, 'search', LONG_S, rate);
      const ceilingStolen = coreShares(ceilingCore, coreTicks(serverCpu)).steal;
      log(
        `long   ${t.name} search ${fmtRate(rate)}/s for ${LONG_S} s: p99 ${r.latency_ms.p99.toFixed(2)} ms (ceiling ${c.latency_ms.p99.toFixed(2)}), ${g.markCompacts} mark-compacts`,
      );
      const ours = {
        maxMs: r.latency_ms.max,
        ceilingMaxMs: c.latency_ms.max,
        markCompacts: g.markCompacts,
        scavenges: g.scavenges,
        maxPauseMs: g.maxPauseMs,
        oursCpu: ((k.userUs + k.sysUs) * r.requests) / (LONG_S * 1e6),
        stolen,
        ceilingStolen,
      };
      return { p99_ms: r.latency_ms.p99, ceiling_p99_ms: c.latency_ms.p99, ours };
    },
    (ours, ceilingP99) => ours <= LONG_FACTOR * ceilingP99,
    short ? 1 : 3,
  );
  const each = judged.runs.map((x) => x.ours);
  return {
    rate,
    p99: judged.p99_ms,
    ceilingP99: judged.ceiling_p99_ms,
    maxMs: Math.max(...each.map((x) => x.maxMs)),
    ceilingMaxMs: Math.max(...each.map((x) => x.ceilingMaxMs)),
    markCompacts: Math.max(...each.map((x) => x.markCompacts)),
    scavenges: median(each.map((x) => x.scavenges)),
    maxPauseMs: Math.max(...each.map((x) => x.maxPauseMs)),
    runs: judged.runs.map((x) => ({
      p99_ms: x.p99_ms,
      ceiling_p99_ms: x.ceiling_p99_ms,
      oursCpu: x.ours.oursCpu,
      stolen: x.ours.stolen,
      ceilingStolen: x.ours.ceilingStolen,
    })),
  };
}

async function sustained(t: Target, ceiling: Target, maxRps: number, generator: number | null): Promise<SustainedRate> {
  const s = await sustainedRate(maxRps, SUSTAIN_FRACTIONS, 2, async (which, rate) => {
    const r = await load(which === 'ours' ? t : ceiling, 'search', DURATION_S, rate, generator);
    return r.latency_ms.p99;
  });
  log(`sustained ${t.name}: ${fmtRate(s.rate)}/s (${s.steps.map((x) => `${fmtRate(x.rate)} ${x.ok ? 'ok' : 'missed'}`).join(', ')})`);
  return s;
}

/** Each step's p99s; a step judged on medians says so and lists its runs' p99s. */
function stepsText(s: SustainedRate): string {
  return s.steps
    .map((x) => {
      const medians = x.runs.length > 1 ? ` (medians of ${x.runs.length}: ${runsText(x.runs, fmt)})` : '';
      return `${fmtRate(x.rate)}: ${fmt(x.p99_ms)} vs ${fmt(x.ceiling_p99_ms)} ms${medians}${x.ok ? '' : ', missed'}`;
    })
    .join('; ');
}

/** 1 vs 2 workers on the whole box, unpinned (their closed-loop rate, then the sustained search rate). */
async function scaling(responsesFile: string): Promise<Array<{ workers: number; maxRps: number; sustained: SustainedRate }>> {
  const ceiling = await startCeiling(responsesFile, null);
  const out: Array<{ workers: number; maxRps: number; sustained: SustainedRate }> = [];
  for (const workers of [1, 2]) {
    const t = await startHpd(`unpinned-w${workers}`, workers, null);
    if (WARMUP) await load(t, 'search', 1, undefined, null);
    const maxRps = (await load(t, 'search', DURATION_S, undefined, null)).rps;
    out.push({ workers, maxRps, sustained: await sustained(t, ceiling, maxRps, null) });
    await t.server.stop();
  }
  await ceiling.server.stop();
  return out;
}

interface Check {
  readonly id: string;
  readonly measured: number;
  readonly target: string;
  readonly met: boolean;
}

/** The worker mode `hpd serve` runs by default here (one core's worth of workers): the sustained-rate target is its. */
const DEFAULT_MODE = 'workers 1';

/** What the pinned runs measured, by target (or `target/workload`) name: the checks and the report read it. */
interface PerCore {
  readonly modes: readonly Target[];
  readonly closed: Map<string, Closed>;
  readonly open: Map<string, Open>;
  readonly long: Map<string, Long>;
  readonly sustainedBy: Map<string, SustainedRate>;
  /** Each server's resident memory after the closed-loop runs, and (ours) after its long run. */
  readonly memory: Map<string, { readonly closed: Resident; readonly long: Resident | null }>;
  /** Where a search's CPU goes: the pipeline alone against the search computed. */
  readonly split: { readonly budget: SearchBudget; readonly hitRate: number | null };
}

function checks({ modes, closed, open, long, sustainedBy }: PerCore): Check[] {
  const out: Check[] = [];
  const floor: Partial<Record<WorkloadName, number>> = { search: SEARCH_FLOOR, aptc: 0.5, detail: 0.8, years: 0.9 };
  for (const t of modes) {
    for (const w of ['search', 'household', 'aptc', 'detail'] as const) {
      const runs = closed.get(`${t.name}/${w}`)!.bytesPerRequest;
      const b = runs.length === 0 ? Number.NaN : median(runs);
      out.push({ id: `${t.name}: ${w} bytes allocated per request`, measured: b, target: '≤ 1024', met: b <= 1024 });
    }
    for (const w of CLOSED) {
      const ratio = median(closed.get(`${t.name}/${w}`)!.rps) / median(closed.get(`ceiling/${w}`)!.rps);
      const f = floor[w];
      if (f !== undefined) out.push({ id: `${t.name}: ${w} requests/s ÷ ceiling`, measured: ratio, target: `≥ ${f}`, met: ratio >= f });
    }
    // A three-member household search serves at least 0.8 of the single-age searches.
    const hh = median(closed.get(`${t.name}/household`)!.rps) / median(closed.get(`${t.name}/search`)!.rps);
    out.push({ id: `${t.name}: household search requests/s ÷ single-age search`, measured: hh, target: '≥ 0.8', met: hh >= 0.8 });
    for (const w of OPEN) {
      const o = open.get(`${t.name}/${w}`)!;
      const ratio = median(o.p99) / median(o.ceilingP99);
      out.push({ id: `${t.name}: ${w} p99 at 80 % ÷ ceiling`, measured: ratio, target: '≤ 1.25', met: ratio <= 1.25 });
    }
    const l = long.get(t.name)!;
    out.push({
      id: `${t.name}: mark-compacts in ${LONG_S} s of search at 80 %`,
      measured: l.markCompacts,
      target: '0',
      met: l.markCompacts === 0,
    });
    const longRatio = l.p99 / l.ceilingP99;
    out.push({
      id: `${t.name}: search p99 over ${LONG_S} s at 80 % ÷ ceiling`,
      measured: longRatio,
      target: `≤ ${LONG_FACTOR}`,
      met: longRatio <= LONG_FACTOR,
    });
    if (t.name === DEFAULT_MODE) {
      const held = sustainedBy.get(t.name)!.rate / median(closed.get(`${t.name}/search`)!.rps);
      out.push({
        id: `${t.name}: sustained search rate ÷ closed-loop search rate`,
        measured: held,
        target: '≥ 0.6',
        met: held >= 0.6,
      });
    }
  }
  return out;
}

const fmt = (x: number, digits = 2): string => (Number.isNaN(x) ? NOT_MEASURED : Number.isInteger(x) ? String(x) : x.toFixed(digits));

function report(
  { modes, closed, open, long, sustainedBy, memory, split }: PerCore,
  scale: Array<{ workers: number; maxRps: number; sustained: SustainedRate }>,
  found: readonly Check[],
): string {
  const lines: string[] = [];
  lines.push(
    `Per core (${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}): every thread of each server on CPU ${serverCpu ?? '(unpinned)'}, wrk/wrk2 on CPU ${generatorCpu ?? '(unpinned)'}; ${REPS} × ${DURATION_S} s per run, ${CONNECTIONS} connections, medians; search cache off.`,
    '',
    '| target | measured | target | |',
    '|---|---:|---:|---|',
    ...found.map((c) => `| ${c.id} | ${fmt(c.measured)} | ${c.target} | ${c.met ? 'met' : '**missed**'} |`),
    '',
    '| workload | server | requests/s | ÷ ceiling | bytes allocated per request | scavenges per 1,000 requests | mark-compacts (closed-loop runs) |',
    '|---|---|---:|---:|---:|---:|---:|',
  );
  for (const w of CLOSED) {
    for (const t of [...modes.map((m) => m.name), 'ceiling']) {
      const c = closed.get(`${t}/${w}`)!;
      const ratio = median(c.rps) / median(closed.get(`ceiling/${w}`)!.rps);
      const alloc = t === 'ceiling' ? '' : allocText(c.bytesPerRequest);
      const scav = c.scavengesPer1k.length === 0 ? '' : fmt(median(c.scavengesPer1k));
      lines.push(
        `| ${w} | ${t} | ${fmtRate(median(c.rps))} | ${fmt(ratio)}× | ${alloc} | ${scav} | ${t === 'ceiling' ? '' : c.markCompacts} |`,
      );
    }
  }
  lines.push(
    '',
    'Per request, what the kernel sees (CPU and switches: medians of the closed-loop runs; syscalls: one run under strace):',
    '',
  );
  const kernel: KernelWorkload[] = KERNEL.map((w) => ({
    workload: w,
    servers: [...modes.map((m) => m.name), 'ceiling'].map((server) => {
      const c = closed.get(`${server}/${w}`)!;
      return { server, runs: c.kernel, syscalls: c.syscalls };
    }),
  }));
  lines.push(...kernelTable(kernel, NOT_TRACED));
  lines.push(
    '',
    `Where a search's CPU goes (every thread of each server on the same core, ${REPS} × ${DURATION_S} s each, alternated; ours with the search cache on runs \`--workers 0\` beside workers 0):`,
    '',
    ...budgetText(split.budget, split.hitRate),
  );
  lines.push(
    '',
    '| workload | server | offered (80 % of its own rate) | p99 ms | ceiling p99 ms | ÷ ceiling |',
    '|---|---|---:|---:|---:|---:|',
  );
  for (const w of OPEN) {
    for (const t of modes) {
      const o = open.get(`${t.name}/${w}`)!;
      lines.push(
        `| ${w} | ${t.name} | ${fmtRate(o.rate)}/s | ${fmt(median(o.p99))} | ${fmt(median(o.ceilingP99))} | ${fmt(median(o.p99) / median(o.ceilingP99))}× |`,
      );
    }
  }
  lines.push(
    '',
    `| server | ${LONG_S} s of search at 80 % | p99 ms | ceiling p99 ms | ÷ ceiling | slowest ms | ceiling's slowest ms | scavenges | mark-compacts | longest pause ms | sustained search rate (p99 ≤ 2× ceiling) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const t of modes) {
    const l = long.get(t.name)!;
    lines.push(
      `| ${t.name} | ${fmtRate(l.rate)}/s | ${fmt(l.p99)} | ${fmt(l.ceilingP99)} | ${fmt(l.p99 / l.ceilingP99)}× | ${fmt(l.maxMs, 1)} | ${fmt(l.ceilingMaxMs, 1)} | ${l.scavenges} | ${l.markCompacts} | ${fmt(l.maxPauseMs, 1)} | ${fmtRate(sustainedBy.get(t.name)!.rate)}/s |`,
    );
  }
  for (const t of modes) {
    const l = long.get(t.name)!;
    if (l.runs.length > 1)
      lines.push('', `${t.name}: the first 30 s run missed; medians of ${l.runs.length} (ours/ceiling p99, ms): ${runsText(l.runs, fmt)}`);
  }
  const pct = (share: number): string => `${(100 * share).toFixed(1)} %`;
  lines.push(
    '',
    `Each 30 s run: ours' CPU (every thread) as a share of the run's wall time, and the share of ${serverCpu === null ? "the machine's" : `CPU ${serverCpu}'s`} time the hypervisor stole during ours' run and during the ceiling's after it (\`/proc/stat\`'s steal):`,
    '',
  );
  for (const t of modes) {
    const runs = long.get(t.name)!.runs;
    lines.push(
      `- ${t.name}: ${runs.map((r) => `p99 ${fmt(r.p99_ms)} ms, CPU ${pct(r.oursCpu)}, stolen ${pct(r.stolen)} (ceiling's run: ${pct(r.ceilingStolen)})`).join('; ')}`,
    );
  }
  lines.push('', 'Sustained search rate, the steps (p99 of ours vs the ceiling at each offered rate):', '');
  for (const t of modes) lines.push(`- ${t.name}: ${stepsText(sustainedBy.get(t.name)!)}`);
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
  lines.push(
    '',
    'Resident memory of each server process (VmRSS; peak: VmHWM, the most it held since it started), MiB:',
    '',
    `| server | after the closed-loop runs | after ${LONG_S} s of search at 80 % | peak |`,
    '|---|---:|---:|---:|',
  );
  for (const [name, m] of memory) {
    const last = m.long ?? m.closed;
    lines.push(`| ${name} | ${mib(m.closed.rssBytes)} | ${m.long === null ? '' : mib(m.long.rssBytes)} | ${mib(last.peakBytes)} |`);
  }
  lines.push(
    '',
    'Unpinned on the whole box (the load generator shares its cores):',
    '',
    '| workers | closed-loop search req/s | sustained search rate (p99 ≤ 2× ceiling) | steps |',
    '|---:|---:|---:|---|',
  );
  for (const s of scale) {
    lines.push(`| ${s.workers} | ${fmtRate(s.maxRps)} | ${fmtRate(s.sustained.rate)}/s | ${stepsText(s.sustained)} |`);
  }
  return lines.join('\n');
}

/**
 * bench:cache-sensitivity on the server core, with nothing else running: how much other memory traffic
 * between requests adds to ours' handler and to the ceiling's, the figure that tells how much a machine's
 * busier or smaller caches will cost ours beside the ceiling. Its table, as it prints it.
 */
async function cacheSensitivity(): Promise<string> {
  const size = short ? ['--requests', '400', '--reps', '1', '--traffic', '0,262144'] : [];
  const [cmd, argv] = pinnedCommand(serverCpu, process.execPath, [
    '--import',
    join(ROOT, 'bin/register-typescript.js'),
    join(ROOT, 'bench/cache-sensitivity.bench.ts'),
    '--builds',
    builds,
    ...size,
  ]);
  const child = spawn(cmd, argv, { cwd: ROOT, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench:cache-sensitivity failed (${code}): ${err.trim().slice(-2000)}`);
  log('cache sensitivity measured');
  return out.trim();
}

try {
  // Both are measured in alternation and live through the whole run: started together.
  const [w0, w1] = await Promise.all([startHpd('workers 0', 0, serverCpu), startHpd('workers 1', 1, serverCpu)]);
  const responses = await record(w0, w1);
  const ceiling = await startCeiling(responses, serverCpu);
  const modes = [w0, w1];
  if (WARMUP) for (const t of [...modes, ceiling]) for (const w of CLOSED) await load(t, w, 1);
  const closed = await closedLoop([...modes, ceiling]);
  const afterClosed = new Map([...modes, ceiling].map((t) => [t.name, resident(t.server.pid)]));
  const split = await budget(w0, ceiling);
  const open = await openLoop(modes, ceiling, closed);
  const long = new Map<string, Long>();
  for (const t of modes) long.set(t.name, await longRun(t, ceiling, closed));
  const memory: PerCore['memory'] = new Map(
    [...modes, ceiling].map((t) => [t.name, { closed: afterClosed.get(t.name)!, long: t === ceiling ? null : resident(t.server.pid) }]),
  );
  const sustainedBy = new Map<string, SustainedRate>();
  for (const t of modes) sustainedBy.set(t.name, await sustained(t, ceiling, median(closed.get(`${t.name}/search`)!.rps), generatorCpu));
  for (const s of [w0, w1, ceiling]) await s.server.stop();
  const scale = await scaling(responses);
  const sensitivity = await cacheSensitivity();
  const perCore: PerCore = { modes, closed, open, long, sustainedBy, memory, split };
  const found = checks(perCore);
  const text = `${report(perCore, scale, found)}\n\nWhat other memory traffic between requests costs each handler (bench:cache-sensitivity, on CPU ${serverCpu ?? '(unpinned)'}):\n\n${sensitivity}`;
  process.stdout.write(`## Per core, both worker modes (bench/tail.bench.ts)\n\n${text}\n`);
  if (!short) {
    const dir = join(ROOT, 'bench/results');
    writeFileSync(join(dir, 'tail.md'), `# Per core, both worker modes (${new Date().toISOString()})\n\n${text}\n`);
    const json = {
      started_at: new Date().toISOString(),
      closed: Object.fromEntries(closed),
      open: Object.fromEntries(open),
      long: Object.fromEntries(long),
      sustained: Object.fromEntries(sustainedBy),
      memory: Object.fromEntries(memory),
      search_budget: split,
      scaling: scale,
      checks: found,
    };
    writeFileSync(join(dir, 'tail.json'), `${JSON.stringify(json, null, 1)}\n`);
    if (found.some((c) => !c.met)) process.exitCode = 1;
  }
} catch (err) {
  log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 2;
} finally {
  for (const s of servers) await s.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}
