/**
 * End-to-end tests of `hpd build`: the real CLI (bin/hpd.js) is spawned as a child process with
 * HPD_DATA_DIR and HPD_CACHE_DIR in fresh temporary directories, and the tests assert on its exit code,
 * stdout, stderr and the published build directory. The repository's data/builds is never touched.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURE_PLANS, writeFixtureInputs, type FixtureFiles } from '../helpers/fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(ROOT, 'bin', 'hpd.js');
const YEAR = 2025;
const STACK_LINE = /^\s+at /m;
/** The real national inputs the default sources file points at (mirror paths relative to the repository). */

interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface Running {
  readonly child: ChildProcess;
  /** Resolves when the process has exited and its output streams are closed. */
  readonly done: Promise<RunResult>;
  /** stdout/stderr received so far. */
  readonly output: { stdout: string; stderr: string };
  /** Calls `fn` with the stderr received so far every time more arrives. */
  onStderr(fn: (soFar: string) => void): void;
}

/** One test's scratch space: temporary directories and child processes, all cleaned up in t.after. */
class Harness {
  readonly root: string;
  readonly dataDir: string;
  readonly cacheDir: string;
  readonly #children: Running[] = [];

  constructor(t: TestContext) {
    this.root = mkdtempSync(join(tmpdir(), 'hpd-cli-'));
    this.dataDir = join(this.root, 'data');
    this.cacheDir = join(this.root, 'cache');
    // One hook, so that children are dead before their directories are removed.
    t.after(async () => {
      for (const r of this.#children) {
        if (r.child.exitCode === null && r.child.signalCode === null) {
          r.child.kill('SIGKILL');
          await Promise.race([r.done, new Promise((res) => setTimeout(res, 5000))]);
        }
      }
      rmSync(this.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    });
  }

  get yearDir(): string {
    return join(this.dataDir, String(YEAR));
  }

  fixture(): FixtureFiles {
    return writeFixtureInputs(join(this.root, 'in'), YEAR);
  }

  spawn(args: readonly string[]): Running {
    const env: NodeJS.ProcessEnv = { ...process.env, HPD_DATA_DIR: this.dataDir, HPD_CACHE_DIR: this.cacheDir };
    delete env.HPD_DEBUG;
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, [HPD, ...args], { cwd: this.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { stdout: '', stderr: '' };
    const listeners: Array<(soFar: string) => void> = [];
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (s: string) => {
      output.stdout += s;
    });
    child.stderr!.on('data', (s: string) => {
      output.stderr += s;
      for (const fn of listeners) fn(output.stderr);
    });
    const done = new Promise<RunResult>((res, rej) => {
      child.once('error', rej);
      child.once('close', (code, signal) => res({ code, signal, stdout: output.stdout, stderr: output.stderr }));
    });
    const running: Running = { child, done, output, onStderr: (fn) => listeners.push(fn) };
    this.#children.push(running);
    return running;
  }

  run(args: readonly string[]): Promise<RunResult> {
    return this.spawn(args).done;
  }

  currentHash(): string {
    return readlinkSync(join(this.yearDir, 'current'));
  }

  tmpDirsLeft(): string[] {
    return existsSync(this.yearDir) ? readdirSync(this.yearDir).filter((n) => n.startsWith('.tmp-')) : [];
  }
}

function describeRun(r: RunResult): string {
  return `exit ${r.code} signal ${r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** Exactly one non-empty line, ending with a newline. */
function assertOneLine(text: string, r: RunResult): void {
  assert.match(text, /^[^\n]+\n$/, `expected exactly one line:\n${describeRun(r)}`);
}

function assertNoStackTrace(r: RunResult): void {
  assert.doesNotMatch(r.stderr, STACK_LINE, `stack trace on stderr:\n${describeRun(r)}`);
  assert.doesNotMatch(r.stdout, STACK_LINE, `stack trace on stdout:\n${describeRun(r)}`);
}

function buildArgs(f: FixtureFiles, ...extra: string[]): string[] {
  return ['build', '--year', String(YEAR), '--sources', f.sourcesFile, '--offline', ...extra];
}

describe('hpd: usage errors', { timeout: 60_000 }, () => {
  test('hpd build --help prints the usage on stdout and exits 0', async (t) => {
    const h = new Harness(t);
    const r = await h.run(['build', '--help']);
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /^Usage: hpd build --year YEAR/);
    assert.match(r.stdout, /--offline/);
    assert.equal(r.stderr, '');
    assertNoStackTrace(r);
  });

  test('hpd without a command exits 2', async (t) => {
    const h = new Harness(t);
    const r = await h.run([]);
    assert.equal(r.code, 2, describeRun(r));
    assert.match(r.stdout + r.stderr, /Usage: hpd <command>/);
    assertNoStackTrace(r);
  });

  test('an unknown command exits 2 with one "hpd: " line on stderr', async (t) => {
    const h = new Harness(t);
    const r = await h.run(['frobnicate']);
    assert.equal(r.code, 2, describeRun(r));
    assertOneLine(r.stderr, r);
    assert.match(r.stderr, /^hpd: /);
    assert.match(r.stderr, /frobnicate/);
    assert.equal(r.stdout, '');
    assertNoStackTrace(r);
  });

  test('hpd build without --year exits 2 with one line', async (t) => {
    const h = new Harness(t);
    const r = await h.run(['build']);
    assert.equal(r.code, 2, describeRun(r));
    assertOneLine(r.stderr, r);
    assert.match(r.stderr, /^hpd: .*--year/);
    assert.equal(r.stdout, '');
    assertNoStackTrace(r);
    assert.equal(existsSync(h.dataDir), false, 'nothing is written');
  });

  test('an unknown build option exits 2 with one line naming it', async (t) => {
    const h = new Harness(t);
    const r = await h.run(['build', '--year', String(YEAR), '--bogus']);
    assert.equal(r.code, 2, describeRun(r));
    assertOneLine(r.stderr, r);
    assert.match(r.stderr, /^hpd: .*--bogus/);
    assert.equal(r.stdout, '');
    assertNoStackTrace(r);
    assert.equal(existsSync(h.dataDir), false, 'nothing is written');
  });
});

describe('hpd build: fixture builds', { timeout: 60_000 }, () => {
  test('builds, publishes current atomically, and reuses an identical build', async (t) => {
    const h = new Harness(t);
    const f = h.fixture();
    const r = await h.run(buildArgs(f));
    assert.equal(r.code, 0, describeRun(r));
    assertNoStackTrace(r);

    const link = join(h.yearDir, 'current');
    assert.ok(lstatSync(link).isSymbolicLink(), 'current is a symlink');
    const hash = h.currentHash();
    assert.match(hash, /^[0-9a-f]{64}$/);
    const target = resolve(h.yearDir, hash);
    assert.ok(statSync(target).isDirectory());
    for (const file of ['manifest.json', 'data.mdb', 'tables.bin']) {
      assert.ok(statSync(join(target, file)).isFile(), `${file} in the build`);
    }

    assert.match(r.stdout, /^built 2025 build /);
    assert.ok(r.stdout.includes(hash.slice(0, 12)), `stdout names the build hash prefix:\n${r.stdout}`);
    assert.ok(r.stdout.includes(target), 'stdout names the build directory');
    assert.ok(r.stdout.includes('puf_data+modeled_premiums'));
    assert.match(r.stdout, new RegExp(`\\b${FIXTURE_PLANS.length} plans \\(\\d+ variants\\), \\d+ issuers, 2 states`));
    assert.match(r.stdout, /\d+ ZIPs, \d+ locations, \d+ counties, \d+ rating areas/);
    // The fixture's dental row is kept apart as a dental plan, not out of scope.
    assert.match(r.stdout, /plan_attributes\s+\d+ rows, 0 rejected, 0 out of scope/);
    assert.match(r.stderr, /^plan attributes: /m, 'progress lines on stderr');
    assert.deepEqual(h.tmpDirsLeft(), []);

    const again = await h.run(buildArgs(f));
    assert.equal(again.code, 0, describeRun(again));
    assertNoStackTrace(again);
    assert.match(again.stdout, /^reused 2025 build /);
    assert.ok(again.stdout.includes(hash.slice(0, 12)));
    assert.equal(h.currentHash(), hash, 'current unchanged');
    assert.deepEqual(readdirSync(h.yearDir).sort(), [hash, 'current'].sort());
  });

  test('--json prints one JSON document on stdout and plain progress on stderr', async (t) => {
    const h = new Harness(t);
    const f = h.fixture();
    const r = await h.run(buildArgs(f, '--json'));
    assert.equal(r.code, 0, describeRun(r));
    assertNoStackTrace(r);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(r.stdout) as Record<string, unknown>;
    } catch (err) {
      assert.fail(`stdout is not one JSON document (${(err as Error).message}):\n${r.stdout}`);
    }
    assert.equal(doc.ok, true);
    assert.equal(doc.reused, false);
    assert.equal(typeof doc.wall_seconds, 'number');
    assert.ok((doc.wall_seconds as number) >= 0);
    assert.equal(typeof doc.peak_rss_bytes, 'number');
    assert.ok(Number.isInteger(doc.peak_rss_bytes) && (doc.peak_rss_bytes as number) > 0);
    assert.ok(Array.isArray(doc.stages) && doc.stages.length > 0, 'stages is a non-empty array');
    for (const s of doc.stages as Array<Record<string, unknown>>) {
      assert.equal(typeof s.stage, 'string');
      assert.equal(typeof s.rows, 'number');
      assert.equal(typeof s.seconds, 'number');
      assert.equal(typeof s.rowsPerSecond, 'number');
    }
    const stageNames = (doc.stages as Array<{ stage: string }>).map((s) => s.stage);
    assert.ok(stageNames.includes('plan attributes'), `stages: ${stageNames.join(', ')}`);
    assert.ok(stageNames.includes('verify'));
    const manifest = doc.manifest as Record<string, unknown>;
    assert.equal(manifest.build_hash, h.currentHash());

    // stderr is not a TTY: one plain line per stage, no carriage-return animation or escape codes.
    assert.match(r.stderr, /^plan attributes: \d[\d,]* rows in \d+\.\d+ s/m);
    assert.match(r.stderr, /^verify: /m);
    assert.doesNotMatch(r.stderr, /[\r\u001b]/);
    assert.doesNotMatch(r.stderr, /^\{/m, 'no JSON on stderr');
  });

  test('a missing required input fails with one line naming the path and the official URL', async (t) => {
    const h = new Harness(t);
    const f = h.fixture();
    const missing = f.paths.service_area!;
    unlinkSync(missing);
    const r = await h.run(buildArgs(f));
    assert.equal(r.code, 1, describeRun(r));
    assertOneLine(r.stderr, r);
    assert.match(r.stderr, /^hpd: service_area: required input not found \(/);
    assert.ok(r.stderr.includes(missing), `stderr names ${missing}`);
    assert.ok(r.stderr.includes('http://127.0.0.1:9/service-area-puf.csv'), 'stderr names the official URL');
    assert.equal(r.stdout, '');
    assertNoStackTrace(r);
    assert.deepEqual(h.tmpDirsLeft(), []);
    assert.equal(existsSync(join(h.yearDir, 'current')), false);
  });

  test('--plan-attributes with a file that does not exist fails with one line naming the path', async (t) => {
    const h = new Harness(t);
    const f = h.fixture();
    const missing = join(h.root, 'nowhere', 'plan-attributes.csv');
    const r = await h.run(buildArgs(f, '--plan-attributes', missing));
    assert.equal(r.code, 1, describeRun(r));
    assertOneLine(r.stderr, r);
    assert.match(r.stderr, /^hpd: /);
    assert.ok(r.stderr.includes(missing), `stderr names ${missing}`);
    assert.equal(r.stdout, '');
    assertNoStackTrace(r);
    assert.deepEqual(h.tmpDirsLeft(), []);
  });

  test('temporary directories of dead builds are removed by the next build', async (t) => {
    const h = new Harness(t);
    const f = h.fixture();
    assert.throws(() => process.kill(999999, 0), { code: 'ESRCH' }, 'precondition: pid 999999 does not exist');
    const stale = join(h.yearDir, '.tmp-deadbeefdeadbeef-999999-1');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'tables.bin'), 'partial');
    const r = await h.run(buildArgs(f));
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(existsSync(stale), false, 'stale temporary directory removed');
    assert.deepEqual(h.tmpDirsLeft(), []);
    assert.deepEqual(readdirSync(h.yearDir).sort(), [h.currentHash(), 'current'].sort());
  });
});

describe('hpd build: interrupted builds', { timeout: 120_000 }, () => {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    test(`${signal} mid-build keeps the previous build current and leaves no partial build (exit ${exitCode})`, {
      timeout: 60_000,
    }, async (t) => {
      const h = new Harness(t);
      const f = h.fixture();
      const first = await h.run(buildArgs(f));
      assert.equal(first.code, 0, describeRun(first));
      const previous = h.currentHash();

      // The real national build, default sources file: long enough to be interrupted mid-way.
      const running = h.spawn(['build', '--year', String(YEAR), '--offline', '--force']);
      let signalled = false;
      let tmpDirsAtSignal: string[] = [];
      running.onStderr((soFar) => {
        // Signal as the modeled-rates stage (several seconds of in-memory work) begins.
        if (signalled || !/^coverage:/m.test(soFar)) return;
        signalled = true;
        tmpDirsAtSignal = h.tmpDirsLeft();
        running.child.kill(signal);
      });
      const r = await running.done;
      assert.ok(signalled, `the build ended before "coverage:" was reported:\n${describeRun(r)}`);
      assert.doesNotMatch(r.stderr, /^rates \(modeled\):/m, 'the signal stopped the modeled-rates stage instead of waiting for it');
      assert.equal(tmpDirsAtSignal.length, 1, 'the build was mid-way: its temporary directory existed when signalled');
      assert.equal(r.code, exitCode, describeRun(r));
      assert.match(r.stderr, /interrupted/);
      assert.ok(r.stderr.includes(signal), 'stderr names the signal');
      assertNoStackTrace(r);
      assert.equal(r.stdout, '', 'no summary for an interrupted build');

      assert.equal(h.currentHash(), previous, 'current still points at the previous build');
      assert.ok(statSync(join(h.yearDir, previous, 'manifest.json')).isFile(), 'the previous build is intact');
      assert.deepEqual(h.tmpDirsLeft(), [], 'no temporary directory left');
      assert.deepEqual(readdirSync(h.yearDir).sort(), [previous, 'current'].sort(), 'no partial build left');
    });
  }
});
