/**
 * `hpd verify`, `hpd serve` and `hpd build` facing damaged builds, as an operator runs them: the real CLI
 * spawned on copies of one fixture build in temporary directories.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readlinkSync, rmSync, symlinkSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture } from '../helpers/fixture-build.ts';
import { freePorts } from '../helpers/services.ts';
import { runHpd, type HpdRun } from '../helpers/run-hpd.ts';

const YEAR = 2025;

let scratch: string;
let original: string;
let hash: string;
let n = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hpd-verify-'));
  const builds = await buildFixture(scratch);
  hash = readlinkSync(join(builds, String(YEAR), 'current'));
  original = join(builds, String(YEAR), hash);
});
after(() => rmSync(scratch, { recursive: true, force: true }));

type Run = HpdRun;

function run(args: readonly string[], dataDir: string, extraEnv: Record<string, string> = {}, timeoutMs = 30_000): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HPD_DATA_DIR: dataDir,
    HPD_CACHE_DIR: join(scratch, 'cache'),
    HPD_STATE_DIR: join(dataDir, '..', 'state'),
    ...extraEnv,
  };
  return runHpd(args, { env, cwd: scratch, timeoutMs });
}

/** A data directory with a copy of the fixture build as current; `damage` alters the copy. */
function dataDir(damage?: (dir: string) => void): string {
  const data = join(scratch, `data-${++n}`, 'builds');
  const dir = join(data, String(YEAR), hash);
  mkdirSync(join(data, String(YEAR)), { recursive: true });
  cpSync(original, dir, { recursive: true });
  symlinkSync(hash, join(data, String(YEAR), 'current'));
  damage?.(dir);
  return data;
}

function flip(path: string, at: number, count: number): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(count, 0x5a), 0, count, at);
  } finally {
    closeSync(fd);
  }
}

const short = (): string => hash.slice(0, 12);
/** stderr without oidc-provider's own warning about Node 20, printed when the auth server module loads. */
const ownStderr = (r: Run): string => r.stderr.replace(/^oidc-provider WARNING: Unsupported runtime\..*\n/m, '');
const show = (r: Run): string => `exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

describe('hpd verify', { timeout: 120_000 }, () => {
  test('an intact current build: one "ok" line, exit 0; --json', async () => {
    const data = dataDir();
    const r = await run(['verify'], data);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, new RegExp(`^ok: build 2025/${short()} \\(current\\): [\\d.]+ MB, sha256 in [\\d.]+ s\\n$`));
    const j = await run(['verify', '--json', '--year', '2025'], data);
    assert.equal(j.code, 0, show(j));
    const doc = JSON.parse(j.stdout) as Array<{ year: number; hash: string; current: boolean; ok: boolean; error: string | null }>;
    assert.deepEqual(
      doc.map((o) => [o.year, o.hash, o.current, o.ok, o.error]),
      [[2025, hash, true, true, null]],
    );
  });

  test('a damaged build: one "FAILED" line naming the file, exit 1', async () => {
    const data = dataDir((d) => flip(join(d, 'tables.bin'), 4096, 16));
    const r = await run(['verify'], data);
    assert.equal(r.code, 1, show(r));
    assert.match(
      r.stdout,
      new RegExp(`^FAILED: build 2025/${short()}: tables\\.bin: sha256 mismatch \\(manifest [0-9a-f]{12}, file [0-9a-f]{12}\\)\\n$`),
    );
    assert.equal(r.stderr, '');
  });

  test('--all checks every build of the year; --hash one of them', async () => {
    const data = dataDir();
    const other = 'e'.repeat(64);
    cpSync(original, join(data, String(YEAR), other), { recursive: true });
    const all = await run(['verify', '--all'], data);
    assert.equal(all.code, 1, show(all));
    const lines = all.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, show(all));
    assert.match(lines[0]!, /^ok: build 2025\/[0-9a-f]{12} \(current\)/);
    assert.match(
      lines[1]!,
      /^FAILED: build 2025\/eeeeeeeeeeee: manifest\.json: build hash [0-9a-f]{12} does not match the directory \(eeeeeeeeeeee\)$/,
    );
    const one = await run(['verify', '--hash', hash.slice(0, 8)], data);
    assert.equal(one.code, 0, show(one));
    assert.equal(one.stdout.trimEnd().split('\n').length, 1);
  });

  test('no build: one line on stderr, exit 1; a usage mistake: exit 2', async () => {
    const r = await run(['verify'], join(scratch, 'nothing-here'));
    assert.equal(r.code, 1, show(r));
    assert.match(r.stderr, /^hpd: no current build under .*nothing-here\n$/);
    const u = await run(['verify', '--bogus'], join(scratch, 'nothing-here'));
    assert.equal(u.code, 2, show(u));
    const h = await run(['verify', '--help'], join(scratch, 'nothing-here'));
    assert.equal(h.code, 0);
    assert.match(h.stdout, /^Usage: hpd verify/);
  });
});

describe('hpd serve and hpd build on a damaged build', { timeout: 120_000 }, () => {
  // Real free ports: without the integrity check the server would start and serve the damaged build
  // (the run is then killed after its timeout and the test fails on the exit code).
  const ports = async (): Promise<Record<string, string>> => {
    const [rest, mcp, auth] = (await freePorts(3)) as [number, number, number];
    return { HPD_PORT: String(rest), HPD_MCP_PORT: String(mcp), HPD_AUTH_PORT: String(auth) };
  };

  test('hpd serve refuses flipped bytes in data.mdb with one line naming the file, exit 1', async () => {
    const data = dataDir((d) => flip(join(d, 'data.mdb'), 8192, 64));
    const r = await run(['serve'], data, await ports());
    assert.equal(r.code, 1, show(r));
    assert.match(
      ownStderr(r),
      new RegExp(`^hpd: build 2025/${short()}: data\\.mdb: sha256 mismatch \\(manifest [0-9a-f]{12}, file [0-9a-f]{12}\\)\\n$`),
    );
    assert.equal(r.stdout, '');
  });

  test('hpd serve refuses a truncated data.mdb (no SIGBUS), exit 1', async () => {
    const data = dataDir((d) => truncateSync(join(d, 'data.mdb'), 4096));
    const r = await run(['serve'], data, await ports());
    assert.equal(r.code, 1, show(r));
    assert.match(
      ownStderr(r),
      new RegExp(`^hpd: build 2025/${short()}: data\\.mdb: size mismatch \\(manifest \\d+ bytes, file 4096 bytes\\)\\n$`),
    );
  });

  test('hpd build repairs a damaged current build, saying so in one line; hpd verify then passes', async () => {
    const data = dataDir((d) => truncateSync(join(d, 'data.mdb'), 4096));
    const sources = join(scratch, 'in', 'sources-2025.json');
    const r = await run(['build', '--year', '2025', '--sources', sources, '--offline', '--quiet'], data);
    assert.equal(r.code, 0, show(r));
    assert.match(
      r.stderr,
      new RegExp(
        `^hpd build: build 2025/${short()}: data\\.mdb: size mismatch \\(manifest \\d+ bytes, file 4096 bytes\\); rebuilding it\\n$`,
      ),
    );
    assert.match(r.stdout, /^built 2025 build /);
    const v = await run(['verify'], data);
    assert.equal(v.code, 0, show(v));
  });
});
