/**
 * `hpd builds list|use|prune|diff` as an operator runs them: the real CLI spawned on copies of two
 * fixture builds of 2025 (test/helpers/fixture-two-builds.ts; B is newer and current).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readlinkSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { writeFixtureInputs } from '../helpers/fixture-inputs.ts';
import { buildTwoFixtures, MODIFIED, type TwoBuilds } from '../helpers/fixture-two-builds.ts';
import { runHpd, type HpdRun } from '../helpers/run-hpd.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let scratch: string;
let two: TwoBuilds;
let n = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hpd-builds-'));
  two = await buildTwoFixtures(scratch);
});
after(() => rmSync(scratch, { recursive: true, force: true }));

type Run = HpdRun;

function run(args: readonly string[], dataDir: string): Promise<Run> {
  return runHpd(args, { env: { ...process.env, HPD_DATA_DIR: dataDir }, cwd: scratch });
}

const show = (r: Run): string => `exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
const s12 = (h: string): string => h.slice(0, 12);

/** A copy of the two-build root (A and B, B current); `extra` names more copies of A under other names. */
function dataDir(extra: readonly string[] = []): string {
  const data = join(scratch, `data-${++n}`, 'builds');
  mkdirSync(data, { recursive: true });
  cpSync(join(two.root, '2025'), join(data, '2025'), { recursive: true, verbatimSymlinks: true });
  for (const name of extra) cpSync(join(data, '2025', two.hashA), join(data, '2025', name), { recursive: true });
  return data;
}

const current = (data: string): string => readlinkSync(join(data, '2025', 'current'));

describe('hpd builds', { timeout: 180_000 }, () => {
  test('list: newest first, current marked, counts, inputs, size check; --json', async () => {
    const data = dataDir();
    const r = await run(['builds', 'list'], data);
    assert.equal(r.code, 0, show(r));
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], '2025:');
    assert.match(lines[1]!, new RegExp(`^\\* ${s12(two.hashB)}  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +[\\d.]+ MB  ok \\(sizes\\)  current$`));
    assert.match(
      lines[2]!,
      /^ {4}13 plans, 46 variants, 8 ZIPs, \d+ rating areas, 2 states; compiler \S+, format 2, puf_data\+modeled_premiums$/,
    );
    assert.match(lines[3]!, /^ {4}inputs: plan-attributes-puf\.csv [0-9a-f]{8}, service-area-puf\.csv [0-9a-f]{8}, /);
    assert.match(lines[4]!, new RegExp(`^  ${s12(two.hashA)}  .* ok \\(sizes\\)$`));
    assert.equal(r.stderr, '');

    const j = await run(['builds', 'list', '--json', '--year', '2025', '--verify'], data);
    assert.equal(j.code, 0, show(j));
    const doc = JSON.parse(j.stdout) as Array<{
      year: number;
      hash: string;
      current: boolean;
      ok: boolean;
      checked: string;
      bytes: number;
      counts: { plans: number; states: number };
      inputs: Array<{ name: string; sha256: string }>;
    }>;
    assert.deepEqual(
      doc.map((e) => [e.year, e.hash, e.current, e.ok, e.checked]),
      [
        [2025, two.hashB, true, true, 'sha256'],
        [2025, two.hashA, false, true, 'sha256'],
      ],
    );
    assert.ok(doc[0]!.bytes > 0);
    assert.deepEqual([doc[0]!.counts.plans, doc[0]!.counts.states], [13, 2]);
    assert.ok(doc[0]!.inputs.some((i) => i.name === 'plan_attributes' && /^[0-9a-f]{64}$/.test(i.sha256)));
  });

  test('list ignores .tmp- and .corrupt- directories and reports a damaged build (exit 1)', async () => {
    const data = dataDir();
    mkdirSync(join(data, '2025', `.tmp-${'1'.repeat(16)}-2147483600-1`));
    mkdirSync(join(data, '2025', `.corrupt-${'2'.repeat(16)}-2147483600-1`));
    const fd = openSync(join(data, '2025', two.hashA, 'tables.bin'), 'r+');
    writeSync(fd, Buffer.from('x'), 0, 1, 1 << 20); // beyond the end: a size change
    closeSync(fd);
    const r = await run(['builds', 'list', '--json'], data);
    assert.equal(r.code, 1, show(r));
    const doc = JSON.parse(r.stdout) as Array<{ hash: string; ok: boolean; problem: string | null }>;
    assert.deepEqual(
      doc.map((e) => e.hash),
      [two.hashB, two.hashA],
    );
    assert.match(doc[1]!.problem!, new RegExp(`^build 2025/${s12(two.hashA)}: tables\\.bin: size mismatch`));
  });

  test('use: switches current by unique prefix, says old -> new; again: already current', async () => {
    const data = dataDir();
    const r = await run(['builds', 'use', '2025', two.hashA.slice(0, 6)], data);
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, `current 2025: ${s12(two.hashB)} -> ${s12(two.hashA)}\n`);
    assert.equal(current(data), two.hashA);
    const again = await run(['builds', 'use', '2025', two.hashA, '--json'], data);
    assert.equal(again.code, 0, show(again));
    assert.deepEqual(JSON.parse(again.stdout), { year: 2025, before: two.hashA, after: two.hashA, changed: false });
  });

  test('use: refuses a damaged build, an unknown or ambiguous hash (exit 1, one line); usage mistakes exit 2', async () => {
    const data = dataDir([`${two.hashB.slice(0, 4)}${'f'.repeat(60)}`]);
    const fd = openSync(join(data, '2025', two.hashA, 'data.mdb'), 'r+');
    writeSync(fd, Buffer.alloc(32, 0x5a), 0, 32, 8192);
    closeSync(fd);
    const damaged = await run(['builds', 'use', '2025', s12(two.hashA)], data);
    assert.equal(damaged.code, 1, show(damaged));
    assert.match(
      damaged.stderr,
      new RegExp(
        `^hpd: refusing to make it current: build 2025/${s12(two.hashA)}: data\\.mdb: sha256 mismatch \\(manifest [0-9a-f]{12}, file [0-9a-f]{12}\\)\\n$`,
      ),
    );
    assert.equal(current(data), two.hashB);

    const unknown = await run(['builds', 'use', '2025', 'abcdef0'], data);
    assert.equal(unknown.code, 1, show(unknown));
    assert.match(unknown.stderr, /^hpd: no build abcdef0 under .*2025\n$/);
    const ambiguous = await run(['builds', 'use', '2025', two.hashB.slice(0, 4)], data);
    assert.equal(ambiguous.code, 1, show(ambiguous));
    assert.match(
      ambiguous.stderr,
      new RegExp(`^hpd: hash prefix ${two.hashB.slice(0, 4)} matches 2 builds of 2025 .*; give more digits\\n$`),
    );

    for (const args of [
      ['builds', 'use', '2025'],
      ['builds', 'use', '25', two.hashA],
      ['builds', 'use', '2025', 'xyz!'],
      ['builds'],
      ['builds', 'frob'],
      ['builds', 'list', '--bogus'],
    ]) {
      const u = await run(args, data);
      assert.equal(u.code, 2, `${args.join(' ')}: ${show(u)}`);
      assert.equal(u.stderr.split('\n').length, 2, show(u));
    }
    const h = await run(['builds', '--help'], data);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /^Usage: hpd builds <list\|use\|prune\|diff>/);
  });

  test('prune: keeps the K newest and always current; --dry-run removes nothing; leftovers of dead processes go', async () => {
    const c = 'c'.repeat(64); // a copy of A: built at the same time, so after B and ordered by hash after A
    const data = dataDir([c]);
    const leftover = `.tmp-${'1'.repeat(16)}-2147483600-1`;
    mkdirSync(join(data, '2025', leftover));
    const use = await run(['builds', 'use', '2025', s12(two.hashA)], data);
    assert.equal(use.code, 0, show(use));

    const dry = await run(['builds', 'prune', '--keep', '1', '--dry-run'], data);
    assert.equal(dry.code, 0, show(dry));
    assert.equal(
      dry.stdout,
      `would remove 2025/cccccccccccc (${dry.stdout.match(/\((\d+\.\d MB)\)/)![1]})\nwould remove 2025/${leftover} (leftover)\nwould free ${dry.stdout.match(/would free (\S+ MB)/)![1]}; kept 2 builds (current: 2025/${s12(two.hashA)})\n`,
    );
    assert.ok(existsSync(join(data, '2025', c)) && existsSync(join(data, '2025', leftover)));

    // K = 1: B is the newest, A is current; the copy C and the leftover go.
    const r = await run(['builds', 'prune', '--keep', '1', '--json'], data);
    assert.equal(r.code, 0, show(r));
    const doc = JSON.parse(r.stdout) as {
      removed: Array<{ name: string; kind: string; bytes: number }>;
      kept: Array<{ hash: string; current: boolean }>;
      bytes_freed: number;
    };
    assert.deepEqual(
      doc.removed.map((x) => [x.name, x.kind]),
      [
        [c, 'build'],
        [leftover, 'leftover'],
      ],
    );
    assert.deepEqual(
      doc.kept.map((x) => [x.hash, x.current]).sort(),
      [
        [two.hashA, true],
        [two.hashB, false],
      ].sort(),
    );
    assert.equal(doc.bytes_freed, doc.removed[0]!.bytes);
    assert.deepEqual(readdirSync(join(data, '2025')).sort(), [two.hashA, two.hashB, 'current'].sort());
    assert.equal(current(data), two.hashA);

    // Back on B, K = 1 removes A: the current build is never removed, the other one is.
    await run(['builds', 'use', '2025', s12(two.hashB)], data);
    const again = await run(['builds', 'prune', '--keep', '1'], data);
    assert.equal(again.code, 0, show(again));
    assert.match(
      again.stdout,
      new RegExp(
        `^removed 2025/${s12(two.hashA)} \\([\\d.]+ MB\\)\\nfreed [\\d.]+ MB; kept 1 build \\(current: 2025/${s12(two.hashB)}\\)\\n$`,
      ),
    );
    assert.deepEqual(readdirSync(join(data, '2025')).sort(), [two.hashB, 'current'].sort());

    for (const args of [
      ['builds', 'prune'],
      ['builds', 'prune', '--keep', '0'],
      ['builds', 'prune', '--keep', 'x'],
    ]) {
      const u = await run(args, data);
      assert.equal(u.code, 2, show(u));
    }
  });

  test('diff: text and --json between YEAR:HASH and YEAR (current)', async () => {
    const data = dataDir();
    const r = await run(['builds', 'diff', `2025:${two.hashA.slice(0, 8)}`, '2025'], data);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, new RegExp(`^diff 2025/${s12(two.hashA)} \\(built [^)]+\\) -> 2025/${s12(two.hashB)} `));
    assert.match(r.stdout, /plans \(standard component ids\): 13 -> 13: 1 added, 1 removed, 4 changed/);
    assert.match(r.stdout, /\n {2}AK 1: \$1012\.38 -> \$1113\.61 /);
    const j = await run(['builds', 'diff', `2025:${two.hashA.slice(0, 8)}`, '2025', '--json'], data);
    assert.equal(j.code, 0, show(j));
    const doc = JSON.parse(j.stdout) as {
      a: { hash: string };
      b: { hash: string };
      plans: { added: string[]; removed: string[] };
      counties: { changed: Array<{ fips: string }> };
    };
    assert.deepEqual(
      [doc.a.hash, doc.b.hash, doc.plans.added, doc.plans.removed, doc.counties.changed.map((x) => x.fips)],
      [two.hashA, two.hashB, [MODIFIED.added], [MODIFIED.removed], [MODIFIED.countyMoved]],
    );

    const missing = await run(['builds', 'diff', '2025', '2024'], data);
    assert.equal(missing.code, 1, show(missing));
    assert.match(missing.stderr, /^hpd: no current build under .*2024\n$/);
    const bad = await run(['builds', 'diff', '2025'], data);
    assert.equal(bad.code, 2, show(bad));
    const badRef = await run(['builds', 'diff', '2025:zz', '2025'], data);
    assert.equal(badRef.code, 2, show(badRef));
  });

  test('diff across years compares the current builds and says plan ids were matched as they are', async () => {
    const data = dataDir();
    const f = writeFixtureInputs(join(scratch, `in-2026-${n}`), 2026);
    await buildDataset({
      year: 2026,
      root: ROOT,
      buildsRoot: data,
      cacheDir: join(scratch, 'cache'),
      sourcesFile: f.sourcesFile,
      offline: true,
      progress: createProgress({ tty: false, quiet: true }),
    });
    const r = await run(['builds', 'diff', '2025', '2026'], data);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /\nnote: builds of two plan years: plans are matched by plan id/);
    // The fixture's 2026 benchmarks are the 2025 ones × 1.3: TX 10 goes from 308 to 400.40 (0–14 normalised).
    assert.match(r.stdout, /\n {2}TX 10: \$514\.54 -> \$668\.90 \(\+154\.36, \+30\.0\d%\)\n/);
    const j = await run(['builds', 'diff', '2025', '2026', '--json'], data);
    const doc = JSON.parse(j.stdout) as {
      cross_year: boolean;
      a: { year: number };
      b: { year: number };
      plans: { total: { added: number; removed: number } };
    };
    assert.deepEqual([doc.cross_year, doc.a.year, doc.b.year, doc.plans.total.added, doc.plans.total.removed], [true, 2025, 2026, 1, 1]);
  });
});
