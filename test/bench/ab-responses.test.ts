/**
 * `npm run bench:ab` (bench/ab-responses.ts) on the fixture build: this checkout against itself answers
 * every request alike (0 mismatches, equal digests, exit 0), a difference between the two sides (the
 * other one's links under another origin) is found, shown and fails the run (exit 1), so do requests
 * left without an answer, and Ctrl-C stops both servers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureBuildForFile } from '../helpers/fixture-build.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fixtureBuildForFile('hpd-ab-test-');

interface AbRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A run of bench:ab on the fixture build; `onStderr` sees its stderr so far and may signal it. */
async function ab(args: readonly string[], onStderr?: (stderr: string, kill: (s: NodeJS.Signals) => void) => void): Promise<AbRun> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawn(
    process.execPath,
    ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/ab-responses.ts'), '--builds', fixture.builds, ...args],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onStderr?.(stderr, (s) => run.kill(s));
  });
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      run.once('exit', (c, sig) => resolve([c, sig])),
    );
    return { code, signal, stdout, stderr };
  } finally {
    if (run.exitCode === null) run.kill('SIGKILL');
  }
}

function digests(stdout: string): { ours: string; against: string } {
  const of = (side: string): string => new RegExp(`^digest ${side}: +sha256:([0-9a-f]{64})$`, 'm').exec(stdout)?.[1] ?? '';
  return { ours: of('ours'), against: of('against') };
}

describe('bench:ab', () => {
  test('this checkout against itself: every answer alike, equal digests, exit 0', { timeout: 60_000 }, async () => {
    const r = await ab(['--against', '.', '--workers', '0', '--count', '200']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    assert.match(r.stdout, /^mismatches: 0$/m);
    const d = digests(r.stdout);
    assert.match(d.ours, /^[0-9a-f]{64}$/);
    assert.equal(d.ours, d.against);
    const requests = /requests: ours (\d+), against (\d+)/.exec(r.stdout);
    assert.ok(requests !== null && Number(requests[1]) >= 200 && requests[1] === requests[2], r.stdout);
    // The list reaches answers and refusals alike: successes, revalidations and client errors.
    const statuses = /^statuses, ours: (.*)$/m.exec(r.stdout)?.[1] ?? '';
    for (const s of ['200', '304', '400', '402', '404']) assert.match(statuses, new RegExp(`\\b${s} ×\\d+`), `a ${s} among ${statuses}`);
  });

  test('a difference between the sides is reported with its request and its place in the body, exit 1', { timeout: 60_000 }, async () => {
    const r = await ab(['--against', '.', '--workers', '0', '--count', '100', '--against-env', 'HPD_BASE_URL=https://elsewhere.test']);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    const count = Number(/^mismatches: (\d+)$/m.exec(r.stdout)?.[1] ?? 0);
    assert.ok(count > 50, `most answers carry a link or a problem type: ${count} mismatches`);
    assert.match(r.stdout, /^ {2}#\d+ GET \/v1\/health\//m);
    assert.match(r.stdout, /_links\.self\.href: "https:\/\/api\.ab\.test\/v1\/health\/[^"]*" ≠ "https:\/\/elsewhere\.test\/v1\/health\//);
    // Counted by kind: the one cause shows as the same JSON path across every answer it touched.
    assert.match(r.stdout, /^ {2}body _embedded\.plans\.\*\._links\.self\.href: \d+ \(#\d+\)$/m);
    const d = digests(r.stdout);
    assert.notEqual(d.ours, d.against);
    assert.match(r.stdout, /^DIGESTS DIFFER$/m);
  });

  test('requests left without an answer fail the run, even when both sides lost them alike', { timeout: 60_000 }, async () => {
    let killed = false;
    const r = await ab(['--against', '.', '--workers', '0', '--count', '200'], (stderr) => {
      const m = /ours .* \(pid (\d+)\) at .* against .* \(pid (\d+)\) at /.exec(stderr);
      if (m === null || killed) return;
      killed = true;
      for (const pid of [m[1], m[2]]) process.kill(Number(pid), 'SIGKILL');
    });
    assert.equal(killed, true, r.stderr.slice(-2000));
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr.slice(-2000)}`);
    assert.match(r.stdout, /^requests without an answer: \d+ \(the run fails\)$/m);
    assert.match(r.stdout, /^statuses, ours: .*no answer ×\d+/m);
  });

  test('Ctrl-C stops both servers and exits 130', { timeout: 60_000 }, async () => {
    let pids: number[] = [];
    let sent = false;
    const r = await ab(['--against', '.', '--workers', '0', '--count', '20000'], (stderr, kill) => {
      const m = /ours .* \(pid (\d+)\) at .* against .* \(pid (\d+)\) at /.exec(stderr);
      if (m === null || sent) return;
      pids = [Number(m[1]), Number(m[2])];
      sent = true;
      kill('SIGINT');
    });
    assert.equal(sent, true, `both servers reported: ${r.stderr.slice(-2000)}`);
    assert.equal(r.code, 130, r.stderr.slice(-2000));
    assert.match(r.stderr, /SIGINT: stopping both servers/);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `server ${pid} is gone`);
  });
});
