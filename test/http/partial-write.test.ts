/**
 * A response finished from `onWritable` is made of its own bytes.
 *
 * Loopback hides partial writes: its send buffer autotunes to megabytes. In a network namespace of the
 * test's own, `net.ipv4.tcp_wmem` and `tcp_rmem` are small (they are per namespace: nothing else on the
 * machine changes), so a 78 KB search page cannot reach the kernel at once and uWS finishes it from
 * `onWritable`. A client there reads one page late while five other searches are served on the same
 * thread (test/helpers/slow-reader.ts). Search bodies are views of a per-route scratch buffer that the
 * next search reuses; unless a pending write owns its bytes, the late reader gets other pages' bytes.
 * Both REST modes run: REST in the main thread, and one REST worker (all requests on one thread either way).
 * Needs root for `ip netns` (the README's test command runs as root on the project's machines).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(root, 'bin', 'hpd.js');
const NS = `hpd-pw-${process.pid}`;
const PORT = 18080;

let dir: string;
let env: NodeJS.ProcessEnv;
let key: string;

const ip = (...args: string[]): void => {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `ip ${args.join(' ')}: ${r.stderr}`);
};
const inNs = (...args: string[]): void => ip('netns', 'exec', NS, ...args);

before(() => {
  assert.equal(process.getuid?.(), 0, 'this test makes a network namespace: run the suite as root (npm test does on the project machines)');
  dir = mkdtempSync(join(tmpdir(), 'hpd-partial-write-'));
  env = { ...process.env, HPD_DATA_DIR: join(dir, 'builds'), HPD_STATE_DIR: join(dir, 'state'), HPD_CACHE_DIR: join(dir, 'cache') };
  delete env.NODE_TEST_CONTEXT;
  // The real PY2025 build: fixture pages (~5 KB) fit in even the smallest buffers.
  const build = spawnSync(process.execPath, [HPD, 'build', '--year', '2025', '--offline', '--quiet'], { env, cwd: root, encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
  const made = spawnSync(process.execPath, [HPD, 'keys', 'create', '--tier', 'pro', '--label', 'slow reader'], {
    env,
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(made.status, 0, made.stderr);
  key = made.stdout.trim();
  ip('netns', 'add', NS);
  inNs('ip', 'link', 'set', 'lo', 'up');
  inNs('sysctl', '-qw', 'net.ipv4.tcp_wmem=4096 8192 16384');
  inNs('sysctl', '-qw', 'net.ipv4.tcp_rmem=4096 4096 4096');
});

after(() => {
  spawnSync('ip', ['netns', 'del', NS]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function serveInNamespace(workers: string): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', NS, process.execPath, HPD, 'serve'], {
    cwd: root,
    env: {
      ...env,
      HPD_HOST: '127.0.0.1',
      HPD_PORT: String(PORT),
      HPD_MCP_PORT: String(PORT + 1),
      HPD_AUTH_PORT: String(PORT + 2),
      HPD_WORKERS: workers,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('hpd: serving')) resolve();
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`hpd serve exited ${code}: ${out}`)));
  });
  return child;
}

for (const workers of ['0', '1']) {
  test(`HPD_WORKERS=${workers}: a page read late over small buffers holds only its own bytes`, { timeout: 120_000 }, async () => {
    const server = await serveInNamespace(workers);
    try {
      const r = spawnSync(
        'ip',
        [
          'netns',
          'exec',
          NS,
          process.execPath,
          '--import',
          './bin/register-typescript.js',
          'test/helpers/slow-reader.ts',
          String(PORT),
          key,
          '5',
        ],
        { cwd: root, env, encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(r.status, 0, r.stderr);
      const result = JSON.parse(r.stdout) as { trials: number; pageBytes: number; spliced: number; first: string | null };
      process.stderr.write(`# HPD_WORKERS=${workers}: ${r.stdout}`);
      assert.ok(result.pageBytes > 40_000, `the page (${result.pageBytes} bytes) is far larger than the namespace's buffers`);
      assert.equal(result.spliced, 0, `pages with other responses' bytes: ${result.spliced} of ${result.trials} (${result.first})`);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });
}
