/**
 * @module `node --import ./bin/register-typescript.js bench/cpu-per-request.ts [search|detail|years|aptc]
 * [--seconds N] [--reps N] [--builds DIR] [--unique]`: the CPU one request costs, ours against the bare-uWS
 * ceiling, alternated in one run.
 *
 * On a shared machine requests/s move with the neighbours' load, but the CPU time a pinned server
 * process consumes per request (user + system, from /proc) barely does: it is the figure to compare
 * two versions of the hot path by. Both servers run pinned to the same CPU at full load (64
 * connections); the ceiling replays our recorded bytes (bench/ceiling/server.ts), so ours ÷ ceiling in
 * CPU per request is the requests/s ratio a quiet machine would show. `--unique` makes ours' URL list
 * long (20,000 distinct requests) so that no response cache can help; the ceiling replays 2,000 of them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import { childEnv, detectPinning, enterpriseKey, QUOTA_OUT_OF_REACH, freePorts, spawnServer, type ServerProcess } from './lib/processes.ts';
import { ensureBuild } from './lib/suite.ts';
import { fetchResponse, mapLimit } from './lib/verify.ts';
import { buildWorkloads, WORKLOADS, type WorkloadName } from './lib/workloads.ts';
import { runWrk } from './lib/wrk.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const workload = (argv.find((a) => (WORKLOADS as readonly string[]).includes(a)) ?? 'search') as WorkloadName;
const seconds = Number(opt('--seconds') ?? 4);
const reps = Number(opt('--reps') ?? 3);
const year = 2025;
const BASE_URL = 'https://api.bench.test';
const QUOTA = QUOTA_OUT_OF_REACH;
const tsHooks = ['--import', join(ROOT, 'bin/register-typescript.js')];

/** utime and stime of a process, seconds. */
function cpu(pid: number): { user: number; sys: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(f[11]) / 100, sys: Number(f[12]) / 100 };
}

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

const source = await ensureBuild(year, opt('--builds') === undefined ? undefined : resolve(opt('--builds')!), (l) =>
  process.stderr.write(`cpu: ${l}\n`),
);
const work = mkdtempSync(join(tmpdir(), 'hpd-cpu-'));
const root = join(work, 'builds');
mkdirSync(join(root, String(year)), { recursive: true });
symlinkSync(realpathSync(join(source, String(year), 'current')), join(root, String(year), 'current'));
const servers: ServerProcess[] = [];
try {
  const registry = openRegistry(root, BASE_URL, [year]);
  const zipf = opt('--zipf') === undefined ? null : Number(opt('--zipf'));
  const n = zipf !== null ? 120_000 : argv.includes('--unique') ? 20_000 : 400;
  const w = buildWorkloads(registry.get(year)!, { registry, baseUrl: BASE_URL }, n).find((x) => x.name === workload)!;
  registry.close();
  const urls = join(work, 'urls');
  writeFileSync(urls, `${(zipf === null ? w.urls : zipfSequence([...new Set(w.urls)], zipf, 400_000)).join('\n')}\n`);
  // Search pages computed for every request (the issue's uncached figure) unless HPD_SEARCH_CACHE_MB says otherwise.
  const env = childEnv({
    HPD_DATA_DIR: root,
    HPD_STATE_DIR: join(work, 'state'),
    HPD_QUOTA_FREE: QUOTA,
    HPD_QUOTA_PRO: QUOTA,
    HPD_QUOTA_ENTERPRISE: QUOTA,
    HPD_SEARCH_CACHE_MB: process.env.HPD_SEARCH_CACHE_MB ?? '0',
  });
  const key = enterpriseKey(env);
  const [rest, mcp, auth, ceilingPort, metricsPort] = (await freePorts(5)) as [number, number, number, number, number];
  const pin = detectPinning();
  const ours = await spawnServer({
    name: 'ours',
    command: process.execPath,
    args: [join(ROOT, 'bin/hpd.js'), 'serve', '--workers', '0'],
    env: {
      ...env,
      HPD_PORT: String(rest),
      HPD_MCP_PORT: String(mcp),
      HPD_AUTH_PORT: String(auth),
      HPD_BASE_URL: BASE_URL,
      HPD_METRICS_PORT: String(metricsPort),
    },
    cwd: ROOT,
    port: rest,
    cpu: pin?.serverCpu ?? null,
    readyUrl: `http://127.0.0.1:${rest}/readyz`,
  });
  servers.push(ours);
  const recorded: Record<string, { status: string; headers: Array<[string, string]>; body: string }> = {};
  const distinct = [...new Set(w.urls)];
  await mapLimit(distinct.slice(0, 2000), 8, async (url) => {
    const r = await fetchResponse(`http://127.0.0.1:${rest}`, url, { authorization: `Bearer ${key}` });
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
  const measure = async (s: ServerProcess, port: number, file: string) => {
    const before = cpu(s.pid);
    const run = await runWrk({
      origin: `http://127.0.0.1:${port}`,
      urlsFile: file,
      headers: [`Authorization: Bearer ${key}`],
      connections: 64,
      durationS: seconds,
      paceMs: 0,
      cpu: pin?.generatorCpu ?? null,
    });
    const after = cpu(s.pid);
    return {
      rps: run.rps,
      user: ((after.user - before.user) * 1e6) / run.requests,
      sys: ((after.sys - before.sys) * 1e6) / run.requests,
      errors: run.errors.total,
    };
  };
  // --strace: one extra run of each server under `strace -c -f` (syscall counts per request; slows it).
  if (argv.includes('--strace')) {
    for (const [s, port, file] of [
      [ours, rest, urls],
      [ceiling, ceilingPort, ceilingUrls],
    ] as const) {
      const tracer = spawn('strace', ['-c', '-f', '-p', String(s.pid), '-o', join(work, `strace-${s.name}`)], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 500));
      const run = await runWrk({
        origin: `http://127.0.0.1:${port}`,
        urlsFile: file,
        headers: [`Authorization: Bearer ${key}`],
        connections: 64,
        durationS: seconds,
        paceMs: 0,
        cpu: pin?.generatorCpu ?? null,
      });
      tracer.kill('SIGINT');
      await new Promise((r) => tracer.on('exit', r));
      process.stdout.write(`strace ${s.name}: ${run.requests} requests\n${readFileSync(join(work, `strace-${s.name}`), 'utf8')}\n`);
    }
  }
  const rows: string[] = [];
  for (let r = 0; r < reps; r++) {
    const o = await measure(ours, rest, urls);
    const c = await measure(ceiling, ceilingPort, ceilingUrls);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const count = (result: string): number =>
      Number(metrics.match(new RegExp(`hpd_search_cache_lookups_total\\{result="${result}"\\} (\\d+)`))?.[1] ?? 0);
    const hits = count('hit');
    const lookups = hits + count('miss');
    const line = `rep ${r + 1}: search cache ${lookups === 0 ? 'off' : `hit rate ${((100 * hits) / lookups).toFixed(1)} % so far`}; ours ${o.rps.toFixed(0)} req/s, ${o.user.toFixed(1)}+${o.sys.toFixed(1)} µs user+sys/req (errors ${o.errors}); ceiling ${c.rps.toFixed(0)} req/s, ${c.user.toFixed(1)}+${c.sys.toFixed(1)} µs; ratio rps ${(o.rps / c.rps).toFixed(3)}, cpu ${((c.user + c.sys) / (o.user + o.sys)).toFixed(3)}`;
    rows.push(line);
    process.stdout.write(`${line}\n`);
  }
} finally {
  for (const s of servers) await s.stop(15_000);
  rmSync(work, { recursive: true, force: true });
}
