/**
 * The load-benchmark harness in its short mode (`npm run bench:short`) on the small fixture build: the
 * targets (our `hpd serve` with the search cache off, the Hono + SQLite baseline, the bare-uWS ceiling,
 * and ours with the search cache on for the realistic stream) start, answer every workload URL with
 * the same bodies, take one short wrk run each and the open-loop wrk2 runs of search without a single
 * error, and the results come out as JSON, markdown and SVG. No performance thresholds: CI boxes are
 * too noisy. Needs wrk (Debian package) and wrk2 (built into data/cache/tools); `npm test`'s pretest
 * step (bin/test-prerequisites.js) provides both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SuiteResult } from '../../bench/lib/suite.ts';
import { buildFixture } from '../helpers/rest-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('bench:short runs every target on the fixture build, closed and open loop: bodies match, no errors, results written', {
  timeout: 180_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-bench-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const builds = await buildFixture(dir);
  const out = join(dir, 'out');
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawn(
    process.execPath,
    ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/run.ts'), '--short', '--builds', builds, '--out', out],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  t.after(() => {
    if (run.exitCode === null) run.kill('SIGKILL');
  });
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  assert.equal(code, 0, `bench:short failed:\n${stderr.slice(-4000)}`);

  const files = readdirSync(out).sort();
  assert.equal(files.length, 3, `one JSON, one markdown and one SVG file: ${files.join(', ')}`);
  const [json, md, svg] = ['.json', '.md', '.svg'].map((ext) => files.find((f) => f.endsWith(ext)));
  assert.ok(json !== undefined && md !== undefined && svg !== undefined);
  const r = JSON.parse(readFileSync(join(out, json), 'utf8')) as SuiteResult;

  assert.equal(r.schema, 2);
  assert.equal(r.mode, 'short');
  assert.equal(r.dataset.year, 2025);
  assert.ok(r.machine.load_generator.startsWith('wrk') && r.machine.load_generator.includes('wrk2'), r.machine.load_generator);

  // Bodies: the baseline's equal ours field by field, the ceiling replays our bytes.
  assert.equal(r.verification.ok, true, JSON.stringify(r.verification.mismatches.slice(0, 3)));
  assert.deepEqual(r.verification.mismatches, []);
  for (const w of ['search', 'detail', 'years', 'realistic', 'ours_cached', 'ceiling'])
    assert.ok((r.verification.compared[w] ?? 0) > 0, `${w} responses compared`);

  // Every target answered every workload it serves, under load, without one error.
  assert.deepEqual(
    r.workloads.map((w) => w.name),
    ['search', 'household', 'detail', 'years', 'aptc', 'realistic'],
  );
  for (const w of r.workloads) {
    const expected =
      w.name === 'aptc' || w.name === 'household'
        ? ['ours', 'ceiling']
        : w.name === 'realistic'
          ? ['ours', 'ours_cached']
          : ['ours', 'baseline', 'ceiling'];
    assert.deepEqual(Object.keys(w.targets).sort(), [...expected].sort(), `${w.name}: targets that ran`);
    if (w.name === 'aptc') assert.match(w.skipped.baseline ?? '', /no APTC/);
    if (w.name === 'household') assert.match(w.skipped.baseline ?? '', /one age only/);
    for (const [name, x] of Object.entries(w.targets)) {
      assert.ok(x.full.runs.length >= 1, `${w.name}/${name}: a full-load run`);
      for (const run of x.full.runs) {
        assert.ok(run.requests > 0, `${w.name}/${name}: requests were answered`);
        assert.equal(run.errors.total, 0, `${w.name}/${name}: errors ${JSON.stringify(run.errors)}`);
      }
      assert.ok(
        x.full.median.rps > 0 && x.full.median.p50_ms > 0 && x.full.median.p99_ms >= x.full.median.p50_ms,
        `${w.name}/${name}: summary ${JSON.stringify(x.full.median)}`,
      );
    }
  }

  // Open loop (wrk2): search at 50, 80 and 95 % of our rate, ours and the ceiling at the same rate.
  const search = r.workloads.find((w) => w.name === 'search')!;
  assert.deepEqual(
    search.open_loop.map((x) => x.level),
    [0.5, 0.8, 0.95],
  );
  for (const x of search.open_loop) {
    assert.ok(
      x.rate > 0 && x.p99_ratio !== null && x.p99_ratio > 0,
      `open loop ${x.level}: ${JSON.stringify({ rate: x.rate, ratio: x.p99_ratio })}`,
    );
    for (const name of ['ours', 'ceiling'] as const) {
      const o = x.targets[name];
      assert.ok(o !== undefined && o.runs.length === 1, `open loop ${x.level}/${name}: a run`);
      const run = o.runs[0]!;
      assert.ok(
        run.requests > 0 && run.open_loop !== undefined && Math.round(run.open_loop.rate) === Math.round(x.rate),
        `open loop ${x.level}/${name}: wrk2 at the offered rate`,
      );
      assert.equal(run.errors.total, 0, `open loop ${x.level}/${name}: errors ${JSON.stringify(run.errors)}`);
      const c = o.median.corrected;
      assert.ok(c.p50 > 0 && c.p99 >= c.p50 && c.p999 >= c.p99 && c.max >= c.p999, `open loop ${x.level}/${name}: ${JSON.stringify(c)}`);
      assert.ok(o.median.uncorrected !== null && o.median.uncorrected.p99 > 0, 'the uncorrected distribution (-U) was read');
    }
  }
  for (const w of r.workloads.filter((x) => x.name !== 'search')) assert.deepEqual(w.open_loop, [], `${w.name}: no open loop in --short`);

  // The realistic stream: its make-up and the search cache's hit rate (measured or estimated, or null
  // while the server has no search cache).
  const real = r.search_cache.realistic;
  assert.ok(
    real !== null && real.universe > 100 && real.requests_in_file === 5000 && real.distinct_in_file <= real.universe,
    JSON.stringify(real),
  );
  assert.ok(real.requests_measured > 0);
  for (const h of [real.hit_rate_measured, real.hit_rate_estimated]) assert.ok(h === null || (h >= 0 && h <= 1), `hit rate ${h}`);
  assert.equal(r.search_cache.setting, 'HPD_SEARCH_CACHE_MB');

  // Ratios, memory, checks, micro-benchmarks.
  assert.ok((r.ratios.search?.ours_baseline ?? 0) > 0 && (r.ratios.search?.ours_ceiling ?? 0) > 0);
  assert.equal(r.ratios.aptc?.ours_baseline, null);
  for (const name of ['ours', 'baseline', 'ceiling'] as const) assert.ok((r.memory[name]?.hwm_bytes ?? 0) > 0, `${name}: memory read`);
  assert.deepEqual(
    r.checks.map((c) => c.id),
    [
      'search_vs_baseline',
      'search_vs_ceiling',
      'years_vs_ceiling',
      'detail_vs_ceiling',
      'aptc_vs_ceiling',
      'household_vs_search',
      'open_loop_p99_search',
      'zero_errors',
      'rss',
    ],
  );
  assert.equal(r.checks.find((c) => c.id === 'zero_errors')?.met, true);
  assert.ok(r.micro.length >= 30 && r.micro.every((m) => m.ops_per_s > 0), 'micro-benchmarks ran');
  for (const g of ['zip', 'search', 'detail', 'compare', 'oop', 'aptc', 'serialize'])
    assert.ok(
      r.micro.some((m) => m.group === g),
      `micro group ${g}`,
    );

  // The human-readable outputs.
  const report = readFileSync(join(out, md), 'utf8');
  assert.match(report, /\| \*\*search\*\* \| ours \|/);
  assert.match(report, /\|\s+\| 80 % = [\d.k]+\/s \| ours \| [\d.k]+ \|/, 'the open-loop table');
  assert.match(report, /\| realistic: Zipf s = [\d.]+, [\d,]+ distinct queries/, 'the search table');
  assert.match(readFileSync(join(out, svg), 'utf8'), /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(stdout, /ours ÷ baseline/);
});
