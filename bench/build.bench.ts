/**
 * @module `npm run bench:build`: the national build with modeled premiums, measured against its targets.
 *
 * Runs `hpd build` in a child process (so peak RSS is the compiler's own), then opens the result in a
 * second fresh process. Targets: build ≤ 60 s wall and ≤ 1.5 GB peak RSS on the
 * 2-core box; open ≤ 1 s and ≤ 400 MB resident. Each figure is printed with its ratio to the target.
 * Builds go to a temporary directory; the repository's data/builds is not touched.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const YEAR = Number(process.env.HPD_BENCH_YEAR ?? 2025);
const RUNS = Number(process.env.HPD_BENCH_RUNS ?? 1);

interface BuildJson {
  wall_seconds: number;
  peak_rss_bytes: number;
  stages: Array<{ stage: string; rows: number; seconds: number; rowsPerSecond: number }>;
  manifest: { build_hash: string; counts: Record<string, number>; files: Record<string, number> };
}
interface OpenJson {
  open_ms: number;
  sweep_ms: number;
  locations: number;
  plan_details: number;
  rss_bytes: number;
  table_bytes: number;
}

const dir = mkdtempSync(join(tmpdir(), 'hpd-bench-build-'));
const env = { ...process.env, HPD_DATA_DIR: join(dir, 'builds'), HPD_CACHE_DIR: join(dir, 'cache') };
try {
  const builds: BuildJson[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'bin/hpd.js'), 'build', '--year', String(YEAR), '--offline', '--force', '--json', '--quiet'],
      { env, encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    if (r.status !== 0) throw new Error(`build failed: ${r.stderr.trim()}`);
    const b = JSON.parse(r.stdout) as BuildJson;
    builds.push({ ...b, wall_seconds: (performance.now() - t0) / 1000 });
  }
  const opens: OpenJson[] = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(
      process.execPath,
      ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/open-dataset.ts'), join(dir, 'builds'), String(YEAR)],
      { env, encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`open failed: ${r.stderr.trim()}`);
    opens.push(JSON.parse(r.stdout) as OpenJson);
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const last = builds.at(-1)!;
  const wall = median(builds.map((b) => b.wall_seconds));
  const rss = Math.max(...builds.map((b) => b.peak_rss_bytes));
  const openMs = median(opens.map((o) => o.open_ms));
  const openRss = Math.max(...opens.map((o) => o.rss_bytes));
  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const row = (what: string, value: string, target: string, ratio: number): string =>
    `| ${what.padEnd(34)} | ${value.padStart(12)} | ${target.padStart(10)} | ${ratio.toFixed(2).padStart(6)} | ${ratio <= 1 ? 'ok  ' : 'MISS'} |`;
  const lines = [
    `National PY${YEAR} build (modeled premiums), Node ${process.version}, ${RUNS} run(s)`,
    '',
    '| measure                            |        value |     target |  ratio |      |',
    '|------------------------------------|--------------|------------|--------|------|',
    row('build wall time', `${wall.toFixed(2)} s`, '60 s', wall / 60),
    row('build peak RSS', mib(rss), '1536 MiB', rss / (1536 * 2 ** 20)),
    row('open time (fresh process)', `${openMs.toFixed(0)} ms`, '1000 ms', openMs / 1000),
    row('resident memory after open+sweep', mib(openRss), '400 MiB', openRss / (400 * 2 ** 20)),
    '',
    '| stage                        |       rows | seconds |     rows/s |',
    '|------------------------------|------------|---------|------------|',
    ...last.stages.map(
      (s) =>
        `| ${s.stage.padEnd(28)} | ${String(s.rows).padStart(10)} | ${s.seconds.toFixed(2).padStart(7)} | ${String(s.rowsPerSecond).padStart(10)} |`,
    ),
    '',
    `build ${last.manifest.build_hash.slice(0, 12)}: ${last.manifest.counts.plans} plans, ${last.manifest.counts.zips} ZIPs, ${last.manifest.counts.premium_pairs} priced plan × area pairs; files ${Object.entries(
      last.manifest.files,
    )
      .map(([k, v]) => `${k} ${mib(v)}`)
      .join(', ')}`,
    `open: ${opens[0]!.locations} locations swept in ${median(opens.map((o) => o.sweep_ms)).toFixed(0)} ms, ${opens[0]!.plan_details} plan details read, tables ${mib(opens[0]!.table_bytes)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const missed = wall > 60 || rss > 1536 * 2 ** 20 || openMs > 1000 || openRss > 400 * 2 ** 20;
  process.exitCode = missed ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
