/**
 * @module `npm run bench`: the whole benchmark suite in one run — engine micro-benchmarks, then load
 * runs against our server, the reference-architecture baseline and the hardware ceiling, alternated on
 * the same machine — and its results in bench/results/<timestamp>.{json,md,svg}.
 *
 * `npm run bench:short` (CI): tiny durations, one repetition, no thresholds; it checks the harness
 * itself (every target answers, bodies match, no errors, wrk2's open loop runs on search). Only a complete full run replaces the files in
 * bench/results (older ones are removed); short and partial runs write to a temporary directory unless
 * --out is given.
 *
 * Options (also `npm run bench -- --help`): --short, --builds DIR (builds root holding <year>/current; default HPD_DATA_DIR or
 * data/builds, with the national build made when missing), --year N, --out DIR, --duration S, --reps N,
 * --connections N, --workloads search,detail,years,aptc (a subset), --profile DIR (run `hpd serve` under
 * --cpu-prof and write its profile there), --no-micro (skip the micro-benchmarks), --report FILE.json
 * (only rewrite the markdown and SVG of an earlier run), --no-workers (skip bench/workers.bench.ts, which a
 * complete full run otherwise runs after the suite: `npm run bench:workers` alone), --no-tail (skip
 * bench/tail.bench.ts, the per-core figures of both worker modes, run next: `npm run bench:tail`
 * alone), --no-redis (skip
 * bench/redis.bench.ts, the Redis state store vs the embedded one, which a complete full run otherwise
 * runs last: `npm run bench:redis` alone; it needs /usr/bin/redis-server).
 * Exit status: 0 when the run completed (and, in full mode, every target of the issue was met); 1 when
 * a target was missed; 2 when the harness failed (a server did not start, bodies differ, wrk missing).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './lib/bench-args.ts';
import { markdownReport, rerender, writeResults } from './lib/report.ts';
import { runSuite, type SuiteOptions } from './lib/suite.ts';
import { WORKLOADS, type WorkloadName } from './lib/workloads.ts';

const USAGE = `Usage: npm run bench [-- options]   (npm run bench:short: the CI check of the harness)

Engine micro-benchmarks, then wrk load runs against ours, the reference baseline and the ceiling,
alternated on this machine, and open-loop wrk2 runs of ours and the ceiling at 50/80/95 % of our
rate (about 8 minutes; wrk needed; wrk2 is built into data/cache/tools on first use); results in
bench/results/ for a complete full run, else in a temporary directory.

Options:
  --short               tiny durations, one repetition, no thresholds (checks the harness)
  --builds DIR          builds root holding <year>/current (default HPD_DATA_DIR or data/builds; the
                        national build is made when missing)
  --year N              plan year (default 2025)
  --out DIR             where the results go
  --duration S          seconds per load run (default 4; 1 with --short)
  --reps N              repetitions (default 3; 1 with --short)
  --connections N       wrk connections at full load (default 64)
  --workloads LIST      a subset of ${WORKLOADS.join(',')} (realistic: the Zipf search
                        stream, ours with the search cache off and on)
  --profile DIR         run hpd serve under --cpu-prof and write its profile there
  --no-micro            skip the micro-benchmarks
  --report FILE.json    only rewrite the markdown and SVG of an earlier run
  --no-workers          skip bench/workers.bench.ts (otherwise run after a complete full run)
  --no-tail             skip bench/tail.bench.ts (per core: both worker modes, allocation,
                        GC, sustained rates; otherwise run after the workers figures, ~10 min)
  --no-redis            skip bench/redis.bench.ts (otherwise run last; needs /usr/bin/redis-server)
  --help                this text

Exit status: 0 completed (full mode: every target met), 1 a target missed, 2 the harness failed.`;

const args = benchArgs('bench', USAGE, {
  short: { type: 'boolean' },
  builds: { type: 'string' },
  year: { type: 'string' },
  out: { type: 'string' },
  duration: { type: 'string' },
  reps: { type: 'string' },
  connections: { type: 'string' },
  workloads: { type: 'string' },
  profile: { type: 'string' },
  'no-micro': { type: 'boolean' },
  report: { type: 'string' },
  'no-workers': { type: 'boolean' },
  'no-tail': { type: 'boolean' },
  'no-redis': { type: 'boolean' },
});
const flag = (name: string): boolean => args[name.slice(2)] === true;
const value = (name: string): string | undefined => {
  const v = args[name.slice(2)];
  return typeof v === 'string' ? v : undefined;
};
const num = (name: string, fallback: number): number => {
  const v = value(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`${name} must be a positive number, got "${v}"\n`);
    process.exit(2);
  }
  return n;
};

const short = flag('--short');
const options: SuiteOptions = {
  mode: short ? 'short' : 'full',
  buildsRoot: value('--builds') === undefined ? undefined : resolve(value('--builds')!),
  year: num('--year', 2025),
  durationS: Math.round(num('--duration', short ? 1 : 4)),
  reps: Math.round(num('--reps', short ? 1 : 3)),
  connections: Math.round(num('--connections', 64)),
  // Open loop: the three workloads (--short: search only, to check the wrk2 path).
  openLoop: short ? ['search'] : ['search', 'detail', 'aptc'],
  openLoopLevels: [0.5, 0.8, 0.95],
  warmup: !short,
  urlsPerWorkload: short ? 40 : 400,
  // The realistic search stream: ≥ 100,000 distinct queries, enough requests that a run never wraps
  // around at ~20k req/s × 4 s; --short: a small stream on the fixture build.
  realistic: short ? { distinct: 2_000, length: 5_000 } : { distinct: 100_000, length: 250_000 },
  workloads: value('--workloads')
    ?.split(',')
    .map((w) => {
      if (!(WORKLOADS as readonly string[]).includes(w)) {
        process.stderr.write(`--workloads: unknown workload "${w}" (${WORKLOADS.join(', ')})\n`);
        process.exit(2);
      }
      return w as WorkloadName;
    }),
  microTimeMs: flag('--no-micro') ? 0 : short ? 5 : 500,
  profileDir: value('--profile') === undefined ? undefined : resolve(value('--profile')!),
  log: (line) => process.stderr.write(`bench: ${line}\n`),
};
// Only a complete full run replaces the committed results in bench/results; the rest go to a temporary
// directory unless --out says otherwise.
const complete = !short && options.workloads === undefined && options.microTimeMs > 0;
const outDir =
  value('--out') !== undefined
    ? resolve(value('--out')!)
    : complete
      ? fileURLToPath(new URL('./results/', import.meta.url))
      : mkdtempSync(join(tmpdir(), 'hpd-bench-'));

if (value('--report') !== undefined) {
  const files = rerender(resolve(value('--report')!));
  process.stdout.write(`rewrote ${files.markdown} and ${files.svg}\n`);
  process.exit(0);
}

try {
  const result = await runSuite(options);
  const files = writeResults(result, outDir, complete && value('--out') === undefined);
  process.stdout.write(`\n${markdownReport(result, null)}\n`);
  process.stdout.write(
    `results: ${files.json}\n         ${files.markdown}\n         ${files.svg}\nwall time ${result.wall_seconds.toFixed(0)} s\n`,
  );
  // The worker-thread figures and the Redis state store's run their own
  // servers: after the suite, one after the other, so they never share the machine with its load runs.
  const companion = (file: string): number | null => {
    const r = spawnSync(
      process.execPath,
      ['--import', fileURLToPath(new URL('../bin/register-typescript.js', import.meta.url)), fileURLToPath(new URL(file, import.meta.url))],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    process.stdout.write(`\n${r.stdout}`);
    return r.status;
  };
  if (complete && !flag('--no-workers') && companion('./workers.bench.ts') !== 0) process.exitCode = 2;
  if (complete && !flag('--no-tail')) {
    // 1: a target was missed; anything else: it failed.
    const status = companion('./tail.bench.ts');
    if (status === 1 && process.exitCode !== 2) process.exitCode = 1;
    else if (status !== 0 && status !== 1) process.exitCode = 2;
  }
  if (complete && !flag('--no-redis')) {
    // 1: its target (Redis ≥ 0.9× the embedded store's requests/s) was missed; anything else: it failed.
    const status = companion('./redis.bench.ts');
    if (status === 1 && process.exitCode !== 2) process.exitCode = 1;
    else if (status !== 0 && status !== 1) process.exitCode = 2;
  }
  const missed = result.checks.filter((c) => !c.met);
  if (!short && missed.length > 0) {
    process.stdout.write(`MISSED: ${missed.map((c) => c.id).join(', ')}\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`bench: FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 2;
}
