/**
 * @module `npm run bench:observability`: what /metrics and the access log cost on the search workload
 * of the national build (our own counters are kept if prom-client would cost > 3 %).
 *
 * Three servers, one REST worker each, their JSON logs going to a file (as to a log collector, not to
 * this process): metrics and access log off; HPD_METRICS_PORT set; HPD_METRICS_PORT set and
 * HPD_ACCESS_LOG=full. Runs alternate between them (off, metrics, full, off, …) so drift on a shared
 * box hits all three alike; the table gives median req/s and the server's CPU time per request.
 */
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import { benchArgs } from './lib/bench-args.ts';
import { childEnv, cpuSeconds, enterpriseKey, QUOTA_OUT_OF_REACH, type ServerProcess, spawnHpdServe } from './lib/processes.ts';
import { ensureBuild } from './lib/suite.ts';
import { fmtRate } from './lib/util.ts';
import { requireWrk, runWrk } from './lib/wrk.ts';
import { buildWorkloads } from './lib/workloads.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HPD = join(ROOT, 'bin/hpd.js');
const BASE_URL = 'http://bench.test';
const log = (l: string): void => void process.stderr.write(`bench:observability: ${l}\n`);
const USAGE = `Usage: npm run bench:observability [-- --short] [-- --builds DIR]

What /metrics and the access log cost on the search workload of the national build: three servers (off;
metrics on; metrics on and HPD_ACCESS_LOG=full), one REST worker each, loaded in alternating rounds.
Needs wrk; about two minutes (the national build is made when missing).

Options:
  --short        3 rounds of 2 s: checks the harness
  --builds DIR   a builds directory to read the national build from
  --help         this text`;
const opts = benchArgs('bench:observability', USAGE, { short: { type: 'boolean' }, builds: { type: 'string' } });
const short = opts.short === true;
const DURATION_S = short ? 2 : 5;
const ROUNDS = short ? 3 : 5;
const CONNECTIONS = 64;

requireWrk(log);
const source = await ensureBuild(2025, typeof opts.builds === 'string' ? opts.builds : undefined, log);
const work = mkdtempSync(join(tmpdir(), 'hpd-bench-obs-'));
const root = join(work, 'builds');
mkdirSync(join(root, '2025'), { recursive: true });
symlinkSync(join(source, '2025', readlinkSync(join(source, '2025', 'current'))), join(root, '2025', 'current'));
const registry = openRegistry(root, BASE_URL);
const search = buildWorkloads(registry.get(2025)!, { registry, baseUrl: BASE_URL }, short ? 40 : 400).find((w) => w.name === 'search')!;
registry.close();
const urls = join(work, 'search.txt');
writeFileSync(urls, `${search.urls.join('\n')}\n`);

interface Config {
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
}
const CONFIGS: readonly Config[] = [
  { name: 'metrics off, access log off', env: {} },
  { name: 'metrics on, access log off', env: { HPD_METRICS_PORT: '0' } },
  { name: 'metrics on, access log full', env: { HPD_METRICS_PORT: '0', HPD_ACCESS_LOG: 'full' } },
];

async function serve(c: Config, i: number): Promise<{ server: ServerProcess; key: string; origin: string; logFile: string }> {
  const env = childEnv({
    HPD_DATA_DIR: root,
    HPD_STATE_DIR: join(work, `state-${i}`),
    HPD_QUOTA_ENTERPRISE: QUOTA_OUT_OF_REACH,
    HPD_BASE_URL: BASE_URL,
    HPD_WATCH_BUILDS: '0',
  });
  const key = enterpriseKey(env);
  const logFile = join(work, `stdout-${i}.log`);
  // exec: the server keeps the shell's pid, so its CPU time is measured; stdout goes to a file.
  const { server, origin } = await spawnHpdServe({
    name: c.name,
    command: '/bin/sh',
    args: ['-c', `exec "${process.execPath}" "${HPD}" serve --workers 1 > "${logFile}"`],
    env: { ...env, ...c.env },
    cwd: ROOT,
  });
  return { server, key, origin, logFile };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const servers = await Promise.all(CONFIGS.map((c, i) => serve(c, i)));
try {
  const load = (s: (typeof servers)[number], durationS: number) =>
    runWrk({
      origin: s.origin,
      urlsFile: urls,
      headers: [`Authorization: Bearer ${s.key}`],
      connections: CONNECTIONS,
      durationS,
      paceMs: 0,
      cpu: null,
    });
  for (const s of servers) await load(s, 1);
  const results = CONFIGS.map(() => ({ rps: [] as number[], cpuUs: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, s] of servers.entries()) {
      const before = cpuSeconds(s.server.pid);
      const r = await load(s, DURATION_S);
      const cpu = cpuSeconds(s.server.pid) - before;
      if (r.errors.total > 0) log(`${CONFIGS[i]!.name}: ${JSON.stringify(r.errors)}`);
      results[i]!.rps.push(r.rps);
      results[i]!.cpuUs.push((cpu / r.requests) * 1e6);
    }
  }
  const base = median(results[0]!.rps);
  const lines = [
    `search, national PY2025 build, 1 REST worker, wrk ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s`,
    '| configuration | req/s (median) | vs off | server CPU per request |',
    '|---|---:|---:|---:|',
    ...CONFIGS.map((c, i) => {
      const rps = median(results[i]!.rps);
      return `| ${c.name} | ${fmtRate(rps)} | ${(((rps - base) / base) * 100).toFixed(1)} % | ${median(results[i]!.cpuUs).toFixed(0)} µs |`;
    }),
    `access log written: ${(statSync(servers[2]!.logFile).size / 1024 / 1024).toFixed(1)} MiB`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all(servers.map((s) => s.server.stop()));
  rmSync(work, { recursive: true, force: true });
}
