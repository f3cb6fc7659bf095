/**
 * A build killed (SIGKILL) at any point of its publication leaves `current` naming a complete build
 * whose files match their sums (or the previous target, untouched), and the next `hpd build` cleans up.
 *
 * Deterministic part: a child runs the real build code (test/helpers/publish-child.ts) and pauses after
 * a named publication step; the test SIGKILLs it there, for every step of the three publication cases.
 * Randomised part: the real CLI `hpd build --force` is SIGKILLed a few milliseconds after it reports its
 * verify stage (publication follows at once), a bounded number of times.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import type { PublishStep } from '../../build/publish.ts';
import { checkBuild } from '../../src/engine/build-integrity.ts';
import { FIXTURE_PLANS, planAttributesCsv, writeFixtureInputs } from '../helpers/fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = join(ROOT, 'test', 'helpers', 'publish-child.ts');
const REGISTER = join(ROOT, 'bin', 'register-typescript.js');
const HPD = join(ROOT, 'bin', 'hpd.js');
const YEAR = 2025;

let scratch: string;
let sourcesFile: string;
/** The fixture build the children rebuild (hash H), and an older build of other inputs (hash P). */
let built: { dir: string; hash: string };
let previous: { dir: string; hash: string };
let roots = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hpd-kill-'));
  const older = writeFixtureInputs(join(scratch, 'in-older'));
  writeFileSync(
    older.paths.plan_attributes!,
    planAttributesCsv(
      YEAR,
      FIXTURE_PLANS.filter((p) => p.scid !== '11111TX0010005'),
    ),
  );
  const p = await build(join(scratch, 'base-older'), older.sourcesFile);
  previous = { dir: p.dir, hash: p.manifest.build_hash };
  sourcesFile = writeFixtureInputs(join(scratch, 'in')).sourcesFile;
  const h = await build(join(scratch, 'base'), sourcesFile);
  built = { dir: h.dir, hash: h.manifest.build_hash };
  assert.notEqual(previous.hash, built.hash);
});
after(() => rmSync(scratch, { recursive: true, force: true }));

function build(buildsRoot: string, sources: string): ReturnType<typeof buildDataset> {
  return buildDataset({
    year: YEAR,
    root: ROOT,
    buildsRoot,
    cacheDir: join(scratch, 'cache'),
    sourcesFile: sources,
    offline: true,
    progress: createProgress({ tty: false, quiet: true, out: new PassThrough() }),
  });
}

type Start = 'previous-current' | 'identical-intact' | 'identical-damaged';

/** A builds root whose current is: another build (P), an intact copy of H, or a damaged copy of H. */
function makeRoot(start: Start): string {
  const buildsRoot = join(scratch, `root-${++roots}`);
  const yd = join(buildsRoot, String(YEAR));
  mkdirSync(yd, { recursive: true });
  const src = start === 'previous-current' ? previous : built;
  cpSync(src.dir, join(yd, src.hash), { recursive: true });
  rmSync(join(yd, src.hash, 'data.mdb-lock'), { force: true });
  symlinkSync(src.hash, join(yd, 'current'));
  if (start === 'identical-damaged') {
    const fd = openSync(join(yd, src.hash, 'data.mdb'), 'r+');
    writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, 8192);
    closeSync(fd);
  }
  return buildsRoot;
}

/** `current` of the year: its target, and the integrity problem of what it names (null when intact). */
function currentState(buildsRoot: string): { target: string | null; problem: string | null } {
  const link = join(buildsRoot, String(YEAR), 'current');
  let target: string | null = null;
  try {
    target = readlinkSync(link);
  } catch {
    return { target: null, problem: 'no current link' };
  }
  if (!existsSync(link)) return { target, problem: `current points at ${target}, which does not exist` };
  try {
    // The staged directory current may name has no hash for a name: the hash it must carry is H's.
    checkBuild(realpathSync(link), { checksums: true, expectedHash: target === previous.hash ? previous.hash : built.hash });
    return { target, problem: null };
  } catch (err) {
    return { target, problem: (err as Error).message };
  }
}

/** What a kill may leave: current intact, or (from a damaged start) exactly the damaged target it had. */
function assertAcceptable(
  start: Start,
  before: ReturnType<typeof currentState>,
  after: ReturnType<typeof currentState>,
  what: string,
): void {
  if (after.problem === null) return;
  assert.notEqual(start, 'previous-current', `${what}: current names a damaged build: ${after.problem}`);
  assert.notEqual(start, 'identical-intact', `${what}: current names a damaged build: ${after.problem}`);
  // Only acceptable when nothing changed: current still names the (already damaged) build it named.
  assert.equal(after.target, before.target, `${what}: current moved to a damaged build: ${after.problem}`);
  assert.equal(after.problem, before.problem, `${what}: current's build was altered: ${after.problem}`);
}

function runChild(buildsRoot: string, pauseAt: PublishStep): Promise<{ paused: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REGISTER, CHILD, buildsRoot, sourcesFile, pauseAt], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let paused = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      if (!paused && stdout.includes(`paused ${pauseAt}\n`)) {
        paused = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ paused, stdout, stderr });
    });
  });
}

const STARTS: readonly Start[] = ['previous-current', 'identical-intact', 'identical-damaged'];

describe('SIGKILL after each publication step', { timeout: 180_000 }, () => {
  for (const start of STARTS) {
    test(`current ${start.replace('-', ' ')}: killed after every step the publication reports`, async () => {
      // The steps come from an unpaused run, so the test covers whatever publication does, not a list.
      const dry = await runChild(makeRoot(start), 'none' as PublishStep);
      assert.match(dry.stdout, /done\n$/, dry.stderr);
      const steps = [...dry.stdout.matchAll(/^step (\S+)$/gm)].map((m) => m[1] as PublishStep);
      assert.ok(steps.length >= 2, `publication reports its steps: ${steps.join(', ')}`);
      for (const step of steps) {
        const buildsRoot = makeRoot(start);
        const before = currentState(buildsRoot);
        const r = await runChild(buildsRoot, step);
        assert.ok(r.paused, `the child reached "${step}" and was killed there:\n${r.stdout}\n${r.stderr}`);
        assertAcceptable(start, before, currentState(buildsRoot), `killed after ${step}`);

        // The next build repairs and tidies: current intact on H, no staging, damaged or stray entries.
        await build(buildsRoot, sourcesFile);
        const repaired = currentState(buildsRoot);
        assert.equal(repaired.target, built.hash, `after ${step}`);
        assert.equal(repaired.problem, null, `after ${step}`);
        const expected = start === 'previous-current' ? [previous.hash, built.hash, 'current'] : [built.hash, 'current'];
        assert.deepEqual(readdirSync(join(buildsRoot, String(YEAR))).sort(), expected.sort(), `after ${step}`);
      }
    });
  }
});

describe('SIGKILL of the real CLI at a random moment of publication', { timeout: 180_000 }, () => {
  test('`hpd build --force` killed 0–15 ms after its verify stage, 4 times: current always intact', async () => {
    for (let i = 0; i < 4; i++) {
      const start: Start = i % 2 === 0 ? 'identical-damaged' : 'identical-intact';
      const buildsRoot = makeRoot(start);
      const before = currentState(buildsRoot);
      const delay = Math.floor(Math.random() * 16);
      const child = spawn(
        process.execPath,
        [HPD, 'build', '--year', String(YEAR), '--sources', sourcesFile, '--offline', '--force', '--out', buildsRoot],
        {
          env: { ...process.env, HPD_CACHE_DIR: join(scratch, 'cache') },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      const closed = new Promise<void>((res) => child.once('close', () => res()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.stderr.setEncoding('utf8').on('data', (s: string) => {
        stderr += s;
        if (/^verify: /m.test(stderr)) setTimeout(() => child.kill('SIGKILL'), delay);
      });
      await closed;
      clearTimeout(timer);
      assert.match(stderr, /^verify: /m, `run ${i} reached publication:\n${stderr}`);
      assertAcceptable(start, before, currentState(buildsRoot), `run ${i} (${start}, killed ${delay} ms after verify)`);
    }
  });
});
