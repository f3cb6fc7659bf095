/**
 * Damaged builds are refused when opened, with one line naming the file; `hpd build` repairs a damaged
 * identical build instead of calling it up to date; publication never deletes a published directory.
 * Every case works on its own copy of one fixture build.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { publishBuild, removeStaleTmpDirs } from '../../build/publish.ts';
import { BuildIntegrityError, checkBuild } from '../../src/engine/build-integrity.ts';
import { openCurrentDataset, openDataset } from '../../src/engine/dataset.ts';
import type { BuildManifest } from '../../src/engine/manifest.ts';
import { writeFixtureInputs } from '../helpers/fixture-inputs.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const YEAR = 2025;

let scratch: string;
let original: string;
let hash: string;
let sourcesFile: string;
let copies = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hpd-integrity-'));
  const f = writeFixtureInputs(join(scratch, 'in'));
  sourcesFile = f.sourcesFile;
  const r = await build(join(scratch, 'builds'));
  original = r.dir;
  hash = r.manifest.build_hash;
});
after(() => rmSync(scratch, { recursive: true, force: true }));

function build(buildsRoot: string, extra: { force?: boolean; out?: PassThrough } = {}): ReturnType<typeof buildDataset> {
  return buildDataset({
    year: YEAR,
    root: ROOT,
    buildsRoot,
    cacheDir: join(scratch, 'cache'),
    sourcesFile,
    offline: true,
    force: extra.force,
    progress: createProgress({ tty: false, quiet: true, out: extra.out ?? new PassThrough() }),
  });
}

/** A builds root holding a copy of the fixture build as `<year>/<hash>` and `current` → it. */
function copyBuild(): { buildsRoot: string; dir: string } {
  const buildsRoot = join(scratch, `copy-${++copies}`);
  const dir = join(buildsRoot, String(YEAR), hash);
  mkdirSync(join(buildsRoot, String(YEAR)), { recursive: true });
  cpSync(original, dir, { recursive: true });
  symlinkSync(hash, join(buildsRoot, String(YEAR), 'current'));
  return { buildsRoot, dir };
}

/** Overwrites `count` bytes in the middle of a file with their complement (size unchanged). */
function flipBytes(path: string, count: number, at = Math.floor(statSync(path).size / 2)): void {
  const bytes = readFileSync(path).subarray(at, at + count);
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.from(bytes.map((b) => b ^ 0xff)), 0, count, at);
  } finally {
    closeSync(fd);
  }
}

function assertRefused(buildsRoot: string, file: string, problem: RegExp): void {
  assert.throws(
    () => openCurrentDataset(buildsRoot, YEAR),
    (err: unknown) => {
      assert.ok(err instanceof BuildIntegrityError, `a BuildIntegrityError, got ${String(err)}`);
      assert.doesNotMatch(err.message, /\n/, 'one line');
      assert.ok(err.message.startsWith(`build ${YEAR}/${hash.slice(0, 12)}: ${file}: `), err.message);
      assert.equal(err.file, file);
      assert.match(err.problem, problem);
      return true;
    },
  );
}

describe('a damaged build is refused at open with one line naming the file', () => {
  test('the manifest lists every output file with size and sha256, and SHA256SUMS covers the manifest', () => {
    const m = JSON.parse(readFileSync(join(original, 'manifest.json'), 'utf8')) as BuildManifest;
    assert.deepEqual(
      m.outputs?.map((f) => f.name),
      ['data.mdb', 'tables.bin'],
    );
    for (const f of m.outputs!) {
      assert.equal(f.bytes, statSync(join(original, f.name)).size);
      assert.match(f.sha256, /^[0-9a-f]{64}$/);
    }
    assert.match(
      readFileSync(join(original, 'SHA256SUMS'), 'utf8'),
      /^[0-9a-f]{64} {2}data\.mdb\n[0-9a-f]{64} {2}tables\.bin\n[0-9a-f]{64} {2}manifest\.json\n$/,
    );
  });

  test('flipped bytes in tables.bin (premiums)', () => {
    const { buildsRoot, dir } = copyBuild();
    flipBytes(join(dir, 'tables.bin'), 16);
    assertRefused(buildsRoot, 'tables.bin', /^sha256 mismatch \(manifest [0-9a-f]{12}, file [0-9a-f]{12}\)$/);
  });

  test('64 flipped bytes in data.mdb', () => {
    const { buildsRoot, dir } = copyBuild();
    flipBytes(join(dir, 'data.mdb'), 64, 8192);
    assertRefused(buildsRoot, 'data.mdb', /^sha256 mismatch/);
  });

  test('a truncated data.mdb is refused before it is mapped (no SIGBUS)', () => {
    const { buildsRoot, dir } = copyBuild();
    truncateSync(join(dir, 'data.mdb'), 4096);
    assertRefused(buildsRoot, 'data.mdb', /^size mismatch \(manifest \d+ bytes, file 4096 bytes\)$/);
  });

  test('a missing file', () => {
    const { buildsRoot, dir } = copyBuild();
    rmSync(join(dir, 'tables.bin'));
    assertRefused(buildsRoot, 'tables.bin', /^missing$/);
  });

  test('a damaged manifest: a changed digit, invalid JSON, a missing manifest or SHA256SUMS, a wrong directory', () => {
    const edit = (change: (dir: string) => void, file: string, problem: RegExp): void => {
      const { buildsRoot, dir } = copyBuild();
      change(dir);
      assertRefused(buildsRoot, file, problem);
    };
    const manifestPath = (dir: string): string => join(dir, 'manifest.json');
    edit(
      (d) => writeFileSync(manifestPath(d), readFileSync(manifestPath(d), 'utf8').replace('"plans": ', '"plans": 1')),
      'manifest.json',
      /^sha256 mismatch \(SHA256SUMS [0-9a-f]{12}, file [0-9a-f]{12}\)$/,
    );
    edit((d) => writeFileSync(manifestPath(d), '{"build_hash": '), 'manifest.json', /^sha256 mismatch/);
    edit((d) => rmSync(manifestPath(d)), 'manifest.json', /^missing$/);
    edit((d) => rmSync(join(d, 'SHA256SUMS')), 'SHA256SUMS', /^missing$/);
    edit((d) => writeFileSync(join(d, 'SHA256SUMS'), 'garbage\n'), 'SHA256SUMS', /^malformed line/);
    // Without the sidecar's protection (a hand-edited SHA256SUMS), invalid JSON is still one line.
    edit(
      (d) => {
        writeFileSync(manifestPath(d), '{"build_hash": ');
        const sums = readFileSync(join(d, 'SHA256SUMS'), 'utf8')
          .split('\n')
          .filter((l) => !l.endsWith('manifest.json'));
        writeFileSync(join(d, 'SHA256SUMS'), `${sums.join('\n')}${'0'.repeat(64)}  manifest.json\n`);
      },
      'manifest.json',
      /^sha256 mismatch/,
    );
    const { buildsRoot, dir } = copyBuild();
    const other = 'f'.repeat(64);
    cpSync(dir, join(buildsRoot, String(YEAR), other), { recursive: true });
    assert.throws(
      () => openDataset(join(buildsRoot, String(YEAR), other)),
      /^BuildIntegrityError: build 2025\/ffffffffffff: manifest\.json: build hash [0-9a-f]{12} does not match the directory \(ffffffffffff\)$/,
    );
  });

  test('current pointing at a directory that does not exist', () => {
    const buildsRoot = join(scratch, `copy-${++copies}`);
    mkdirSync(join(buildsRoot, String(YEAR)), { recursive: true });
    symlinkSync('0'.repeat(64), join(buildsRoot, String(YEAR), 'current'));
    assert.throws(
      () => openCurrentDataset(buildsRoot, YEAR),
      /^BuildIntegrityError: build 2025\/current: current: points at 0{64}, which does not exist$/,
    );
  });

  test('sizes are checked on every open; a file rewritten after adoption is hashed again', () => {
    const { buildsRoot, dir } = copyBuild();
    openCurrentDataset(buildsRoot, YEAR).close(); // adopted: hashed once
    flipBytes(join(dir, 'tables.bin'), 8);
    assertRefused(buildsRoot, 'tables.bin', /^sha256 mismatch/);
    const second = copyBuild();
    openCurrentDataset(second.buildsRoot, YEAR).close();
    truncateSync(join(second.dir, 'data.mdb'), 8192);
    assertRefused(second.buildsRoot, 'data.mdb', /^size mismatch/);
  });

  test('opening and querying a build read-only leaves its sums valid (the lock file is not summed)', () => {
    const { buildsRoot, dir } = copyBuild();
    const ds = openCurrentDataset(buildsRoot, YEAR, { checksums: 'always' });
    for (const id of ds.planIds()) ds.planRecord(`${id}-01`);
    ds.issuers('TX');
    ds.close();
    assert.ok(existsSync(join(dir, 'data.mdb-lock')));
    assert.equal(checkBuild(dir, { checksums: true }).checksummed, true);
  });

  test('a format 1 build (no sums) opens with a warning and sizes checked; truncated, it is refused', () => {
    const strip = (dir: string): void => {
      const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BuildManifest & { outputs?: unknown };
      delete m.outputs;
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, format_version: 1 }));
      rmSync(join(dir, 'SHA256SUMS'));
    };
    const { buildsRoot, dir } = copyBuild();
    strip(dir);
    const ds = openCurrentDataset(buildsRoot, YEAR);
    assert.match(
      ds.integrityWarning ?? '',
      /^build 2025\/[0-9a-f]{12}: no checksums \(format 1, .*\): only sizes were checked; run hpd build --year 2025 to rebuild it$/,
    );
    ds.close();
    const broken = copyBuild();
    strip(broken.dir);
    truncateSync(join(broken.dir, 'data.mdb'), 4096);
    assertRefused(broken.buildsRoot, 'data.mdb', /^size mismatch/);
  });
});

describe('hpd build and publication with an existing identical build', () => {
  test('a damaged current build is rebuilt (one warning line), not reported up to date; the damaged copy is moved aside, then removed', async () => {
    const { buildsRoot, dir } = copyBuild();
    flipBytes(join(dir, 'data.mdb'), 64, 8192);
    const out = new PassThrough();
    let stderr = '';
    out.on('data', (d: Buffer) => (stderr += d.toString()));
    const r = await build(buildsRoot, { out });
    assert.equal(r.reused, false);
    assert.match(
      stderr,
      /^hpd build: build 2025\/[0-9a-f]{12}: data\.mdb: sha256 mismatch \(manifest [0-9a-f]{12}, file [0-9a-f]{12}\); rebuilding it$/m,
    );
    const yd = join(buildsRoot, String(YEAR));
    assert.equal(readlinkSync(join(yd, 'current')), hash);
    assert.equal(checkBuild(join(yd, hash), { checksums: true }).checksummed, true);
    assert.deepEqual(
      readdirSync(yd).sort(),
      [hash, 'current'].sort(),
      'the damaged copy (moved aside by this process) is removed at the end of the build',
    );
    const again = await build(buildsRoot);
    assert.equal(again.reused, true, 'now up to date');
  });

  test('--force with an intact identical build keeps the published directory untouched and re-points current', async () => {
    const { buildsRoot, dir } = copyBuild();
    const before = readdirSync(dir).map((n) => [n, statSync(join(dir, n)).ino, statSync(join(dir, n)).mtimeMs]);
    const r = await build(buildsRoot, { force: true });
    assert.equal(r.dir, dir);
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n !== 'data.mdb-lock')
        .map((n) => [n, statSync(join(dir, n)).ino, statSync(join(dir, n)).mtimeMs]),
      before.filter(([n]) => n !== 'data.mdb-lock'),
      'same files, same inodes, not rewritten',
    );
    assert.equal(
      r.manifest.built_at,
      (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BuildManifest).built_at,
      'the manifest reported is the one served',
    );
  });

  test('publishing over a damaged directory moves it aside; the next cleanup removes it', () => {
    const { buildsRoot, dir } = copyBuild();
    const yd = join(buildsRoot, String(YEAR));
    rmSync(join(dir, 'tables.bin'));
    const staged = join(yd, `.tmp-${hash.slice(0, 16)}-${process.pid}-1`);
    cpSync(original, staged, { recursive: true });
    const steps: string[] = [];
    const out = publishBuild(staged, buildsRoot, YEAR, hash, { afterStep: (s) => steps.push(s) });
    assert.equal(out.action, 'replaced');
    assert.match(out.damage ?? '', /tables\.bin: missing/);
    assert.deepEqual(steps, [
      'synced',
      'current-on-staging',
      'damaged-moved-aside',
      'linked',
      'renamed',
      'current-switched',
      'staging-removed',
    ]);
    assert.equal(readlinkSync(join(yd, 'current')), hash);
    assert.equal(checkBuild(dir, { checksums: true }).checksummed, true);
    assert.equal(readdirSync(yd).filter((n) => n.startsWith('.corrupt-')).length, 1);
    removeStaleTmpDirs(buildsRoot, YEAR);
    assert.deepEqual(readdirSync(yd).sort(), [hash, 'current'].sort());
  });
});
