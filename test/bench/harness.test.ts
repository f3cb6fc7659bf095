/**
 * The load-benchmark harness in its short mode (`npm run bench:short`) on the small fixture build: the
 * three targets (our `hpd serve`, the Hono + SQLite baseline, the bare-uWS ceiling) start, answer every
 * workload URL with the same bodies, take one short wrk run each without a single error, and the
 * results come out as JSON, markdown and SVG. No performance thresholds: CI boxes are too noisy.
 * Needs wrk (Debian package; .ci/run installs it).
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

test('bench:short runs the three targets on the fixture build: bodies match, no errors, results written', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-bench-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const builds = await buildFixture(dir);
  const out = join(dir, 'out');
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawn(process.execPath, ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/run.ts'), '--short', '--builds', builds, '--out', out], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

  assert.equal(r.schema, 1);
  assert.equal(r.mode, 'short');
  assert.equal(r.dataset.year, 2025);
  assert.ok(r.machine.load_generator.startsWith('wrk'), r.machine.load_generator);

  // Bodies: the baseline's equal ours field by field, the ceiling replays our bytes.
  assert.equal(r.verification.ok, true, JSON.stringify(r.verification.mismatches.slice(0, 3)));
  assert.deepEqual(r.verification.mismatches, []);
  for (const w of ['search', 'detail', 'years', 'ceiling']) assert.ok((r.verification.compared[w] ?? 0) > 0, `${w} responses compared`);

  // Every target answered every workload it serves, under load, without one error.
  assert.deepEqual(r.workloads.map((w) => w.name), ['search', 'detail', 'years', 'aptc']);
  for (const w of r.workloads) {
    const expected = w.name === 'aptc' ? ['ours', 'ceiling'] : ['ours', 'baseline', 'ceiling'];
    assert.deepEqual(Object.keys(w.targets).sort(), [...expected].sort(), `${w.name}: targets that ran`);
    if (w.name === 'aptc') assert.match(w.skipped.baseline ?? '', /no APTC/);
    for (const [name, x] of Object.entries(w.targets)) {
      assert.ok(x.full.runs.length >= 1, `${w.name}/${name}: a full-load run`);
      for (const run of [...x.full.runs, ...(x.paced?.runs ?? [])]) {
        assert.ok(run.requests > 0, `${w.name}/${name}: requests were answered`);
        assert.equal(run.errors.total, 0, `${w.name}/${name}: errors ${JSON.stringify(run.errors)}`);
      }
      assert.ok(x.full.median.rps > 0 && x.full.median.p50_ms > 0 && x.full.median.p99_ms >= x.full.median.p50_ms, `${w.name}/${name}: summary ${JSON.stringify(x.full.median)}`);
    }
  }
  const search = r.workloads.find((w) => w.name === 'search')!;
  for (const name of ['ours', 'baseline', 'ceiling'] as const) {
    const paced = search.targets[name]?.paced;
    assert.ok(paced !== null && paced !== undefined && paced.median.rps > 0, `search/${name}: an 80 % run`);
    assert.ok(paced.target_rps > 0);
  }

  // Ratios, memory, checks, micro-benchmarks.
  assert.ok((r.ratios.search?.ours_baseline ?? 0) > 0 && (r.ratios.search?.ours_ceiling ?? 0) > 0);
  assert.equal(r.ratios.aptc?.ours_baseline, null);
  for (const name of ['ours', 'baseline', 'ceiling'] as const) assert.ok((r.memory[name]?.hwm_bytes ?? 0) > 0, `${name}: memory read`);
  assert.deepEqual(r.checks.map((c) => c.id), ['search_vs_baseline', 'search_vs_ceiling', 'years_vs_ceiling', 'search_p99_at_80', 'zero_errors', 'rss']);
  assert.equal(r.checks.find((c) => c.id === 'zero_errors')?.met, true);
  assert.ok(r.micro.length >= 30 && r.micro.every((m) => m.ops_per_s > 0), 'micro-benchmarks ran');
  for (const g of ['zip', 'search', 'detail', 'compare', 'oop', 'aptc', 'serialize']) assert.ok(r.micro.some((m) => m.group === g), `micro group ${g}`);

  // The human-readable outputs.
  const report = readFileSync(join(out, md), 'utf8');
  assert.match(report, /\| \*\*search\*\* \| ours \|/);
  assert.match(readFileSync(join(out, svg), 'utf8'), /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(stdout, /ours ÷ baseline/);
});
