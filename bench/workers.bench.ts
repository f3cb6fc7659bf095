/**
 * @module `npm run bench:workers`: what REST worker threads cost and give on the national build:
 * peak RSS of `hpd serve --workers 1`, `2` and `4`; search requests/s of 1 vs 2 workers with the
 * server's CPU time per request; and search latency while `hpd builds use` flips `current` between two
 * builds 10 times, next to the same run without flips.
 *
 * This box has 2 cores and wrk needs one of them, so requests/s of 2 workers cannot show a second core's
 * worth here: the CPU time per request tells what each configuration costs. The second build is the
 * national one compiled again from a Service Area PUF copy with one extra blank line at the end (same
 * data, another input checksum, so another build hash); both live in a temporary builds root.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry } from '../src/operations/data-registry.ts';
import {
  childEnv,
  cpuSeconds,
  detectPinning,
  enterpriseKey,
  memoryOf,
  QUOTA_OUT_OF_REACH,
  type ServerProcess,
  spawnHpdServe,
} from './lib/processes.ts';
import { benchArgs } from './lib/bench-args.ts';
import { ensureBuild } from './lib/suite.ts';
import { fmtMs, fmtRate, MIB, sleep } from './lib/util.ts';
import { requireWrk, runWrk, type WrkRun } from './lib/wrk.ts';
import { buildWorkloads } from './lib/workloads.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HPD = join(ROOT, 'bin/hpd.js');
const BASE_URL = 'http://bench.test';
const log = (l: string): void => void process.stderr.write(`bench:workers: ${l}\n`);
const USAGE = `Usage: npm run bench:workers [-- --short]

What REST worker threads cost and give on the national build: peak RSS of hpd serve --workers 1, 2 and
4; search requests/s of 1 vs 2 workers with the server's CPU time per request; search latency while hpd
builds use flips current 10 times. Needs wrk; a few minutes (the national build is made when missing).

Options:
  --short   1 s runs and 3 s of flips: checks the harness
  --help    this text`;
const short = benchArgs('bench:workers', USAGE, { short: { type: 'boolean' } }).short === true;
const DURATION_S = short ? 1 : 4;
const SWAP_S = short ? 3 : 10;

requireWrk(log);

const source = await ensureBuild(2025, undefined, log);
const work = mkdtempSync(join(tmpdir(), 'hpd-bench-workers-'));
const root = join(work, 'builds');
const a = readlinkSync(join(source, '2025', 'current'));
mkdirSync(join(root, '2025'), { recursive: true });
cpSync(join(source, '2025', a), join(root, '2025', a), { recursive: true });
symlinkSync(a, join(root, '2025', 'current'));
log(`second build for the flips (~15 s)`);
const sa = join(work, 'service-area-puf.csv');
copyFileSync(join(ROOT, '../shared/data/cms/py2025/service-area-puf.csv'), sa);
appendFileSync(sa, '\n');
const built = spawnSync(
  process.execPath,
  [HPD, 'build', '--year', '2025', '--out', root, '--service-area', sa, '--offline', '--quiet', '--json'],
  { encoding: 'utf8', env: childEnv({}) },
);
if (built.status !== 0) throw new Error(`second build failed: ${built.stderr}`);
const b = readlinkSync(join(root, '2025', 'current'));
if (b === a) throw new Error('the second build has the same hash');

const registry = openRegistry(root, BASE_URL);
const search = buildWorkloads(registry.get(2025)!, { registry, baseUrl: BASE_URL }, short ? 40 : 400).find((w) => w.name === 'search')!;
registry.close();
const urls = join(work, 'search.txt');
writeFileSync(urls, `${search.urls.join('\n')}\n`);
// Keyset cursors are bound to the build that issued them (a data update makes them a 400 "Invalid
// cursor", by design): the flip runs replay the other searches.
const swapUrls = join(work, 'search-no-cursor.txt');
writeFileSync(swapUrls, `${search.urls.filter((u) => !u.includes('cursor=')).join('\n')}\n`);
const pinning = detectPinning();

async function serve(workers: number): Promise<{ server: ServerProcess; key: string; origin: string }> {
  const state = join(work, `state-${workers}`);
  const env = childEnv({ HPD_DATA_DIR: root, HPD_STATE_DIR: state, HPD_QUOTA_ENTERPRISE: QUOTA_OUT_OF_REACH, HPD_BASE_URL: BASE_URL });
  const key = enterpriseKey(env);
  const { server, origin } = await spawnHpdServe({
    name: `ours --workers ${workers}`,
    command: process.execPath,
    args: [HPD, 'serve', '--workers', String(workers)],
    env,
    cwd: ROOT,
  });
  return { server, key, origin };
}

const load = (origin: string, key: string, connections: number, durationS: number, paceMs = 0, urlsFile = urls): Promise<WrkRun> =>
  runWrk({
    origin,
    urlsFile,
    headers: [`Authorization: Bearer ${key}`],
    connections,
    durationS,
    paceMs,
    cpu: pinning?.generatorCpu ?? null,
  });

const rows: string[] = [];
const rss = new Map<number, number>();
const rate = new Map<number, { rps: number; cpuUs: number }>();
try {
  for (const workers of [1, 2, 4]) {
    const { server, key, origin } = await serve(workers);
    try {
      await load(origin, key, 32, 2);
      const runs: WrkRun[] = [];
      let cpu = 0;
      if (workers <= 2) {
        for (let rep = 0; rep < (short ? 1 : 2); rep++) {
          const before = cpuSeconds(server.pid);
          const r = await load(origin, key, 64, DURATION_S);
          cpu += cpuSeconds(server.pid) - before;
          runs.push(r);
        }
        const requests = runs.reduce((s, r) => s + r.requests, 0);
        rate.set(workers, { rps: runs.reduce((s, r) => s + r.rps, 0) / runs.length, cpuUs: (cpu / requests) * 1e6 });
      }
      const m = memoryOf(server.pid)!;
      rss.set(workers, m.hwm_bytes);
      log(
        `--workers ${workers}: peak RSS ${(m.hwm_bytes / MIB).toFixed(0)} MiB${rate.has(workers) ? `, ${fmtRate(rate.get(workers)!.rps)} req/s, ${rate.get(workers)!.cpuUs.toFixed(0)} µs CPU per request` : ''}`,
      );
    } finally {
      await server.stop();
    }
  }

  // Flips under load: 2 workers, about half the full-load rate (16 connections with think time).
  const { server, key, origin } = await serve(2);
  try {
    const full = rate.get(2)!.rps;
    const connections = 16;
    const paceMs = Math.max(0.5, (connections / (full * 0.5)) * 1000);
    const calm = await load(origin, key, connections, SWAP_S, paceMs, swapUrls);
    let flips = 0;
    let flipping = true;
    const flipper = (async () => {
      // Deadlines from the start, not sleeps between flips: each `hpd builds use` takes ~0.4 s itself.
      const start = Date.now();
      for (let i = 0; i < 10 && flipping; i++) {
        await sleep(start + ((i + 1) * SWAP_S * 1000) / 11 - Date.now());
        const r = spawnSync(process.execPath, [HPD, 'builds', 'use', '2025', i % 2 === 0 ? b : a], {
          encoding: 'utf8',
          env: childEnv({ HPD_DATA_DIR: root }),
        });
        if (r.status === 0) flips++;
        else log(`flip failed: ${r.stderr.trim()}`);
      }
    })();
    const swapping = await load(origin, key, connections, SWAP_S, paceMs, swapUrls);
    flipping = false;
    await flipper;
    if (swapping.errors.total > 0)
      log(
        `errors during the flips: ${JSON.stringify(swapping.errors)}; server log: ${server.stderr().trim().split('\n').slice(-12).join(' | ')}`,
      );
    rows.push(
      '| run | req/s | p50 | p99 | p99.9 | max | errors |',
      '|---|---:|---:|---:|---:|---:|---:|',
      `| search without cursors, 2 workers, no flips | ${fmtRate(calm.rps)} | ${fmtMs(calm.latency_ms.p50)} | ${fmtMs(calm.latency_ms.p99)} | ${fmtMs(calm.latency_ms.p999)} | ${fmtMs(calm.latency_ms.max)} | ${calm.errors.total} |`,
      `| search without cursors, 2 workers, ${flips} flips of current | ${fmtRate(swapping.rps)} | ${fmtMs(swapping.latency_ms.p50)} | ${fmtMs(swapping.latency_ms.p99)} | ${fmtMs(swapping.latency_ms.p999)} | ${fmtMs(swapping.latency_ms.max)} | ${swapping.errors.total} |`,
    );
  } finally {
    await server.stop();
  }

  const one = rss.get(1)!;
  process.stdout.write(
    [
      `Workers on the national PY2025 build (${process.version}, ${pinning === null ? 'unpinned' : `wrk on CPU ${pinning.generatorCpu}`})`,
      '',
      '| --workers | peak RSS | above 1 worker, per extra worker | search req/s (64 conn.) | server CPU per request |',
      '|---:|---:|---:|---:|---:|',
      ...[1, 2, 4].map((w) => {
        const r = rate.get(w);
        const extra = w === 1 ? '—' : `${((rss.get(w)! - one) / (w - 1) / MIB).toFixed(0)} MiB`;
        return `| ${w} | ${(rss.get(w)! / MIB).toFixed(0)} MiB | ${extra} | ${r === undefined ? '—' : fmtRate(r.rps)} | ${r === undefined ? '—' : `${r.cpuUs.toFixed(0)} µs`} |`;
      }),
      '',
      ...rows,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
