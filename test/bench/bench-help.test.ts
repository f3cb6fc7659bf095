/**
 * `npm run bench -- --help` (and bench:workers, bench:redis, bench:ab) print their options and exit 0 at once
 * instead of starting a run of several minutes; a mistyped option stops them with a did-you-mean.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function bench(script: string, ...args: string[]): { status: number | null; stdout: string; stderr: string; ms: number } {
  const started = performance.now();
  const r = spawnSync(process.execPath, ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - started };
}

test('the benchmark scripts answer --help with their options and exit 0 without running', () => {
  for (const [script, name, option] of [
    ['bench/run.ts', 'bench', '--workloads'],
    ['bench/workers.bench.ts', 'bench:workers', '--short'],
    ['bench/redis.bench.ts', 'bench:redis', '--short'],
    ['bench/observability.bench.ts', 'bench:observability', '--short'],
    ['bench/ab-responses.ts', 'bench:ab', '--against'],
    ['bench/quota-flush.bench.ts', 'bench:quota-flush', 'No options'],
    ['bench/cache-sensitivity.bench.ts', 'bench:cache-sensitivity', '--traffic'],
  ] as const) {
    const r = bench(script, '--help');
    assert.equal(r.status, 0, `${script}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: npm run ${name} `));
    assert.ok(r.stdout.includes(option), `${script} lists ${option}`);
    assert.equal(r.stderr, '', `${script} started nothing`);
    assert.ok(r.ms < 20_000, `${script} --help took ${r.ms} ms`);
  }
});

test('a mistyped benchmark option stops at once: one line with a did-you-mean, exit 2', () => {
  const r = bench('bench/run.ts', '--shrot');
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'bench: unknown option --shrot (did you mean --short?)\n');
  assert.equal(r.stdout, '');
});

test('bench:ab without --against stops at once with one usage line, exit 2', () => {
  const r = bench('bench/ab-responses.ts', '--count', '10');
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'bench:ab: --against DIR is required (see npm run bench:ab -- --help)\n');
  assert.equal(r.stdout, '');
});

test('bench:cpu --per-page takes a page size for the search workload only: one usage line, exit 2', () => {
  for (const [args, line] of [
    [['--per-page', '0'], 'bench:cpu: --per-page takes a page size from 1 to 100, not 0 (see npm run bench:cpu -- --help)\n'],
    [['--per-page', 'ten'], 'bench:cpu: --per-page takes a page size from 1 to 100, not ten (see npm run bench:cpu -- --help)\n'],
    [['aptc', '--per-page', '10'], 'bench:cpu: --per-page is for the search workload, not aptc (see npm run bench:cpu -- --help)\n'],
  ] as const) {
    const r = bench('bench/cpu-per-request.ts', ...args);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr, line);
    assert.equal(r.stdout, '');
  }
});
