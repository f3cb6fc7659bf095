/**
 * `npm run bench:ab` (bench/ab-responses.ts) on the fixture build: this checkout against itself answers
 * every request alike (0 mismatches, equal digests, exit 0), and a difference between the two sides
 * (the other one's links under another origin) is found, shown and fails the run (exit 1).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFixture } from '../helpers/fixture-build.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir = '';
let builds = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-ab-test-'));
  builds = await buildFixture(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function ab(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawn(
    process.execPath,
    ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/ab-responses.ts'), '--builds', builds, ...args],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
    return { code, stdout, stderr };
  } finally {
    if (run.exitCode === null) run.kill('SIGKILL');
  }
}

function digests(stdout: string): { ours: string; against: string } {
  const of = (side: string): string => new RegExp(`^digest ${side}: +sha256:([0-9a-f]{64})$`, 'm').exec(stdout)?.[1] ?? '';
  return { ours: of('ours'), against: of('against') };
}

test('this checkout against itself: every answer alike, equal digests, exit 0', { timeout: 60_000 }, async () => {
  const r = await ab('--against', '.', '--workers', '0', '--count', '300');
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
  assert.match(r.stdout, /^mismatches: 0$/m);
  const d = digests(r.stdout);
  assert.match(d.ours, /^[0-9a-f]{64}$/);
  assert.equal(d.ours, d.against);
  const requests = /requests: ours (\d+), against (\d+)/.exec(r.stdout);
  assert.ok(requests !== null && Number(requests[1]) >= 300 && requests[1] === requests[2], r.stdout);
  // The list reaches answers and refusals alike: successes, revalidations and client errors.
  const statuses = /^statuses, ours: (.*)$/m.exec(r.stdout)?.[1] ?? '';
  for (const s of ['200', '304', '400', '402', '404']) assert.match(statuses, new RegExp(`\\b${s} ×\\d+`), `a ${s} among ${statuses}`);
});

test('a difference between the sides is reported with its request and its place in the body, exit 1', { timeout: 60_000 }, async () => {
  const r = await ab('--against', '.', '--workers', '0', '--count', '100', '--against-env', 'HPD_BASE_URL=https://elsewhere.test');
  assert.equal(r.code, 1, `${r.stdout}\n${r.stderr.slice(-3000)}`);
  const count = Number(/^mismatches: (\d+)$/m.exec(r.stdout)?.[1] ?? 0);
  assert.ok(count > 50, `most answers carry a link or a problem type: ${count} mismatches`);
  assert.match(r.stdout, /^ {2}#\d+ GET \/v1\/health\//m);
  assert.match(r.stdout, /_links\.self\.href: "https:\/\/api\.ab\.test\/v1\/health\/[^"]*" ≠ "https:\/\/elsewhere\.test\/v1\/health\//);
  const d = digests(r.stdout);
  assert.notEqual(d.ours, d.against);
  assert.match(r.stdout, /^DIGESTS DIFFER$/m);
});
