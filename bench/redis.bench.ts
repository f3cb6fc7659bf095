/**
 * @module `npm run bench:redis`: the search workload on one `hpd serve --workers 0` instance with the
 * state on Redis (`HPD_REDIS_URL`) next to the same instance on the embedded LMDB store,
 * in the same run: requests/s (target: Redis ≥ 0.9× embedded), p50/p99/p99.9, errors, the server's CPU
 * time per request, and how often the instance called Redis while it served.
 *
 * Both servers run side by side on the national build and take the load in turns (A B A B…), so drift
 * of the machine affects both alike; wrk as in bench/workers.bench.ts (64 connections, its own core).
 * The Redis is a fresh `redis-server` on a free port in a temporary directory, without persistence.
 * The enterprise limit is raised to HPD_QUOTA_ENTERPRISE=10,000,000 so no request is refused, while
 * the quota leases keep a realistic block size: 0.5 % of the limit over the lease holders, 50,000 units
 * for one holder (leased-quota.ts), i.e. one lease call per 25,000 requests or so (a thread leases again
 * when half of its block is spent).
 *
 * `--short`: one 1 s repetition each, no threshold. Exit status: 0 when the run completed (and, in
 * full mode, the 0.9× target was met); 1 when it was missed; 2 when the harness failed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import { childEnv, cpuSeconds, detectPinning, enterpriseKey, type ServerProcess, spawnHpdServe } from './lib/processes.ts';
import { benchArgs } from './lib/bench-args.ts';
import { ensureBuild } from './lib/suite.ts';
import { fmtMs, fmtRate, fmtRatio, median } from './lib/util.ts';
import { REDIS_SERVER, startTestRedis } from './lib/redis-server.ts';
import { requireWrk, runWrk, type WrkRun } from './lib/wrk.ts';
import { buildWorkloads } from './lib/workloads.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HPD = join(ROOT, 'bin/hpd.js');
const REDIS_CLI = '/usr/bin/redis-cli';
const BASE_URL = 'http://bench.test';
const TARGET = 0.9;
const LIMIT = 10_000_000;
/** The lease block of one holder at LIMIT (leased-quota.ts: 0.5 % of the limit over the holders). */
const blockFor = (holders: number): number => Math.floor(Math.floor((LIMIT * 5) / 1000) / Math.max(1, holders));
const log = (l: string): void => void process.stderr.write(`bench:redis: ${l}\n`);
const USAGE = `Usage: npm run bench:redis [-- --short]

The search workload on one hpd serve --workers 0 with its state on Redis (HPD_REDIS_URL, a fresh
redis-server on a free port) next to the embedded store, in turns: requests/s (target: Redis >= 0.9x
embedded), p50/p99/p99.9, errors, CPU time per request. Needs wrk and /usr/bin/redis-server.

Options:
  --short   one 1 s repetition each, no threshold
  --help    this text

Exit status: 0 completed (full mode: target met), 1 target missed, 2 the harness failed.`;
const short = benchArgs('bench:redis', USAGE, { short: { type: 'boolean' } }).short === true;
const DURATION_S = short ? 1 : 4;
const REPS = short ? 1 : 5;
const CONNECTIONS = 64;

requireWrk(log);
if (spawnSync(REDIS_SERVER, ['--version']).status !== 0 || spawnSync(REDIS_CLI, ['--version']).status !== 0) {
  log(`${REDIS_SERVER} or ${REDIS_CLI} is missing (apt-get install -y redis-server)`);
  process.exit(2);
}

type Config = 'embedded' | 'redis';
const CONFIGS: readonly Config[] = ['embedded', 'redis'];

const root = await ensureBuild(2025, undefined, log);
const work = mkdtempSync(join(tmpdir(), 'hpd-bench-redis-'));
const registry = openRegistry(root, BASE_URL);
const search = buildWorkloads(registry.get(2025)!, { registry, baseUrl: BASE_URL }, short ? 40 : 400).find((w) => w.name === 'search')!;
registry.close();
const urls = join(work, 'search.txt');
writeFileSync(urls, `${search.urls.join('\n')}\n`);
const pinning = detectPinning();

/** One redis-cli command against the bench's Redis; its stdout. */
function cli(port: number, ...args: string[]): string {
  const r = spawnSync(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Client commands processed so far, and calls of EVAL (lease calls and give-backs of the quota). */
function redisCounts(port: number): { commands: number; evals: number } {
  const stats = cli(port, 'info', 'stats');
  const commandstats = cli(port, 'info', 'commandstats');
  return {
    commands: Number(/^total_commands_processed:(\d+)/m.exec(stats)?.[1] ?? Number.NaN),
    evals: Number(/^cmdstat_eval:calls=(\d+)/m.exec(commandstats)?.[1] ?? 0),
  };
}

async function serve(config: Config, redisUrl: string): Promise<{ server: ServerProcess; key: string; origin: string }> {
  const env = childEnv({
    HPD_DATA_DIR: root,
    HPD_STATE_DIR: join(work, `state-${config}`),
    HPD_QUOTA_ENTERPRISE: String(LIMIT),
    HPD_BASE_URL: BASE_URL,
    ...(config === 'redis' ? { HPD_REDIS_URL: redisUrl } : {}),
  });
  const key = enterpriseKey(env);
  const { server, origin } = await spawnHpdServe({
    name: `ours --workers 0, ${config} store`,
    command: process.execPath,
    args: [HPD, 'serve', '--workers', '0'],
    env,
    cwd: ROOT,
  });
  return { server, key, origin };
}

const load = (origin: string, key: string, connections: number, durationS: number): Promise<WrkRun> =>
  runWrk({
    origin,
    urlsFile: urls,
    headers: [`Authorization: Bearer ${key}`],
    connections,
    durationS,
    paceMs: 0,
    cpu: pinning?.generatorCpu ?? null,
  });

let exitCode = 0;
// No persistence: disk writes of the Redis would enter the figures.
const redis = await startTestRedis({ persistent: false });
const servers: ServerProcess[] = [];
try {
  const redisUrl = redis.url;
  const targets = {} as Record<Config, { server: ServerProcess; key: string; origin: string }>;
  for (const config of CONFIGS) {
    targets[config] = await serve(config, redisUrl);
    servers.push(targets[config].server);
  }
  const runs: Record<Config, WrkRun[]> = { embedded: [], redis: [] };
  const cpu: Record<Config, number> = { embedded: 0, redis: 0 };
  let redisCpu = 0;
  let answered = 0;
  const calls = { commands: 0, evals: 0 };
  for (const config of CONFIGS) {
    const t = targets[config];
    const warm = await load(t.origin, t.key, CONNECTIONS / 2, short ? 1 : 2);
    if (config === 'redis') answered += warm.requests;
  }
  for (let rep = 0; rep < REPS; rep++) {
    for (const config of CONFIGS) {
      const t = targets[config];
      const before = { server: cpuSeconds(t.server.pid), redis: cpuSeconds(redis.pid()!), counts: redisCounts(redis.port) };
      const r = await load(t.origin, t.key, CONNECTIONS, DURATION_S);
      cpu[config] += cpuSeconds(t.server.pid) - before.server;
      if (config === 'redis') {
        const after = redisCounts(redis.port);
        calls.commands += after.commands - before.counts.commands;
        calls.evals += after.evals - before.counts.evals;
        redisCpu += cpuSeconds(redis.pid()!) - before.redis;
        answered += r.requests;
      }
      runs[config].push(r);
      log(`${config} ${rep + 1}/${REPS}: ${fmtRate(r.rps)} req/s, p99 ${fmtMs(r.latency_ms.p99)} ms, ${r.errors.total} errors`);
      if (r.errors.total > 0)
        log(`${config} errors ${JSON.stringify(r.errors)}; server log: ${t.server.stderr().trim().split('\n').slice(-6).join(' | ')}`);
    }
  }
  const day = new Date().toISOString().slice(0, 10);
  const leased = cli(redis.port, 'hvals', `hpd:quota:${day}`)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .reduce((s, l) => s + Number(l), 0);
  const holders = Number(cli(redis.port, 'zcard', 'hpd:quota-holders').trim());

  const med = (config: Config, f: (r: WrkRun) => number): number => median(runs[config].map(f));
  const requests = (config: Config): number => runs[config].reduce((s, r) => s + r.requests, 0);
  const rps = { embedded: med('embedded', (r) => r.rps), redis: med('redis', (r) => r.rps) };
  const ratio = rps.redis / rps.embedded;
  const pairs = runs.redis.map((r, i) => r.rps / runs.embedded[i]!.rps);
  const met = ratio >= TARGET;
  const row = (config: Config, label: string): string =>
    `| ${label} | ${fmtRate(rps[config])} | ${fmtMs(med(config, (r) => r.latency_ms.p50))} | ${fmtMs(med(config, (r) => r.latency_ms.p99))} | ${fmtMs(med(config, (r) => r.latency_ms.p999))} | ${runs[config].reduce((s, r) => s + r.errors.total, 0)} | ${((cpu[config] / requests(config)) * 1e6).toFixed(0)} µs |`;
  process.stdout.write(
    [
      `Redis state store vs embedded, search workload on the national PY2025 build (${process.version}, \`hpd serve --workers 0\`, ${pinning === null ? 'unpinned' : `wrk on CPU ${pinning.generatorCpu}`}; ` +
        `${REPS} × ${DURATION_S} s per configuration at ${CONNECTIONS} connections, alternated; medians of the repetitions, errors summed)`,
      '',
      '| state store | req/s | p50 ms | p99 ms | p99.9 ms | errors | server CPU per request |',
      '|---|---:|---:|---:|---:|---:|---:|',
      row('embedded', 'embedded (LMDB)'),
      row('redis', 'Redis (HPD_REDIS_URL)'),
      '',
      `Redis ÷ embedded, requests/s: ${fmtRatio(ratio)} (target ≥ ${TARGET}×: ${short ? 'not checked in short mode' : met ? 'met' : '**MISSED**'}); per pair of runs ${pairs.map(fmtRatio).join(', ')}.`,
      `Quota leases: HPD_QUOTA_ENTERPRISE=${LIMIT.toLocaleString('en-US')}, ${holders} lease holder${holders === 1 ? '' : 's'}, so a block of ${blockFor(holders).toLocaleString('en-US')} units (0.5 % of the limit over the holders). ` +
        `During the ${requests('redis').toLocaleString('en-US')} requests of the Redis runs, Redis saw ${calls.evals} EVAL calls (quota leases) of ${calls.commands} commands in all ` +
        `(the rest: holder heartbeats and generation checks), and used ${(redisCpu * 1000).toFixed(0)} ms of CPU. ` +
        `Units leased today: ${leased.toLocaleString('en-US')} for ${answered.toLocaleString('en-US')} requests answered (warm-up included).`,
      '',
    ].join('\n'),
  );
  if (!short && !met) {
    process.stdout.write(`MISSED: redis_vs_embedded (${fmtRatio(ratio)} < ${TARGET}×)\n`);
    exitCode = 1;
  }
} catch (err) {
  log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 2;
} finally {
  for (const s of servers.reverse()) await s.stop().catch(() => {});
  await redis.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(exitCode);
