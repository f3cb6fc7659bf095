/**
 * @module `npm run bench:profile -- [search|detail|years|aptc] [--seconds N] [--builds DIR]`: where our
 * server spends a request. Starts `hpd serve` under `--cpu-prof` on the national build (pinned like the
 * load runs), drives one workload of the suite with wrk at full load (a warm-up, then the measured
 * run), stops the server and prints the request path's cost by function, in microseconds per request
 * and with TypeScript line numbers. The .cpuprofile is kept (path printed) for Chrome DevTools.
 *
 * Run through npm (our TypeScript hook runs it).
 * `--no-profile` measures the same run without the profiler (its overhead is about 20 %).
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import { formatSummary, summarizeProfile } from './lib/cpuprofile.ts';
import { benchServeEnv, detectPinning, enterpriseKey, freePorts, spawnServer } from './lib/processes.ts';
import { benchArgsWithChoice } from './lib/bench-args.ts';
import { ensureBuild } from './lib/suite.ts';
import { buildWorkloads, WORKLOADS } from './lib/workloads.ts';
import { runWrk } from './lib/wrk.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const USAGE = `Usage: npm run bench:profile -- [${WORKLOADS.join('|')}] [options]

Where our server spends a request: hpd serve under --cpu-prof, one workload at full load, the cost by
function in µs per request (TypeScript lines); default workload search.

Options:
  --seconds N     seconds of the measured run (default 8)
  --year N        plan year (default 2025)
  --builds DIR    builds root holding <year>/current (default: data/builds, built when missing)
  --out DIR       where the .cpuprofile goes (default: a temporary directory)
  --top N         functions listed (default 30)
  --no-profile    the same run without the profiler (its overhead is about 20 %)
  --help          this text`;
const { values: args, choice: workload } = benchArgsWithChoice(
  'bench:profile',
  USAGE,
  {
    seconds: { type: 'string' },
    year: { type: 'string' },
    builds: { type: 'string' },
    out: { type: 'string' },
    top: { type: 'string' },
    'no-profile': { type: 'boolean' },
  },
  WORKLOADS,
  'search',
);
const opt = (name: string): string | undefined => {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
};
const seconds = Number(opt('seconds') ?? 8);
const profile = args['no-profile'] !== true;
const year = Number(opt('year') ?? 2025);
const BASE_URL = 'https://api.bench.test';

const source = await ensureBuild(year, opt('builds') === undefined ? undefined : resolve(opt('builds')!), (l) =>
  process.stderr.write(`profile: ${l}\n`),
);
const buildDir = realpathSync(join(source, String(year), 'current'));
const work = mkdtempSync(join(tmpdir(), 'hpd-profile-'));
const profDir = resolve(opt('out') ?? join(tmpdir(), `hpd-profile-${workload}-${Date.now()}`));
if (profile) mkdirSync(profDir, { recursive: true });
const root = join(work, 'builds');
mkdirSync(join(root, String(year)), { recursive: true });
symlinkSync(buildDir, join(root, String(year), 'current'));
try {
  const registry = openRegistry(root, BASE_URL, [year]);
  // The realistic search stream is drawn only when asked for (100,000 distinct queries, as the suite).
  const realistic = workload === 'realistic' ? { distinct: 100_000, length: 250_000 } : undefined;
  const w = buildWorkloads(registry.get(year)!, { registry, baseUrl: BASE_URL }, 400, realistic).find((x) => x.name === workload)!;
  registry.close();
  const urls = join(work, 'urls');
  writeFileSync(urls, `${w.urls.join('\n')}\n`);
  // Search pages computed for every request (the uncached figure) unless HPD_SEARCH_CACHE_MB says otherwise.
  const env = benchServeEnv(root, join(work, 'state'), { HPD_SEARCH_CACHE_MB: process.env.HPD_SEARCH_CACHE_MB ?? '0' });
  const key = enterpriseKey(env);
  const [rest, mcp, auth] = (await freePorts(3)) as [number, number, number];
  const pin = detectPinning();
  const server = await spawnServer({
    name: 'ours',
    command: process.execPath,
    args: [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), join(ROOT, 'bin/hpd.js'), 'serve', '--workers', '0'],
    env: { ...env, HPD_PORT: String(rest), HPD_MCP_PORT: String(mcp), HPD_AUTH_PORT: String(auth), HPD_BASE_URL: BASE_URL },
    cwd: ROOT,
    port: rest,
    cpu: pin?.serverCpu ?? null,
    readyUrl: `http://127.0.0.1:${rest}/readyz`,
  });
  const load = (durationS: number) =>
    runWrk({
      origin: `http://127.0.0.1:${rest}`,
      urlsFile: urls,
      headers: [`Authorization: Bearer ${key}`],
      connections: 64,
      durationS,
      paceMs: 0,
      cpu: pin?.generatorCpu ?? null,
    });
  const warm = await load(2);
  const run = await load(seconds);
  await server.stop(15_000);
  const head = `${workload}: ${run.rps.toFixed(0)} req/s at full load (p50 ${run.latency_ms.p50.toFixed(2)} ms, p99 ${run.latency_ms.p99.toFixed(2)} ms), ${(run.bytes_per_response / 1024).toFixed(1)} KiB per response`;
  if (!profile) {
    process.stdout.write(`${head}, errors ${run.errors.total}\n`);
  } else {
    const file = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(profDir, f))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0];
    if (file === undefined) throw new Error(`no profile written to ${profDir}`);
    const summary = summarizeProfile(file, warm.requests + run.requests, Number(opt('top') ?? 30));
    process.stdout.write(`${head}; ${warm.requests + run.requests} requests profiled\n${formatSummary(summary)}\nprofile: ${file}\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
