/**
 * `npm run bench:tail -- --short` on the fixture build: both worker modes and the ceiling start with
 * every thread on one core, answer the same bytes, and every table comes out with figures read from a
 * real GC trace (bytes allocated per request > 0, or said to be unmeasured when a run saw no collection;
 * scavenges counted), and the kernel table has every thread's CPU and switches per request and, for
 * search, the syscalls, sends and bytes strace counted. No performance thresholds. Also
 * the GC trace reader and the sustained-rate search on their own.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GcTrace, parseGcLine } from '../../bench/lib/gc-trace.ts';
import { judgedPairs } from '../../bench/lib/judged-pairs.ts';
import { sustainedRate } from '../../bench/lib/sustained-rate.ts';
import { buildFixture } from '../helpers/rest-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('gc-trace', () => {
  const line = (iso: string, kind: string, pause: number, allocated: number): string =>
    `[123:${iso}]    812 ms: pause=${pause} mutator=3.1 gc=${kind} reduce_memory=0 time_to_safepoint=0.00 allocated=${allocated} promoted=0 new_space_survived=10`;

  it('reads isolate, kind, pause and allocated bytes, and nothing from other lines', () => {
    assert.deepEqual(parseGcLine(line('0x3b74a000', 's', 0.4, 4656160)), {
      isolate: '[123:0x3b74a000]',
      kind: 's',
      pauseMs: 0.4,
      allocated: 4656160,
    });
    assert.equal(parseGcLine('{"level":"info","msg":"serving"}'), null);
    assert.equal(parseGcLine('hpd: serving years 2025'), null);
  });

  it('counts a collection whose prefix another thread’s line took', () => {
    const body = 'pause=0.9 mutator=3.1 gc=s reduce_memory=0 allocated=700 promoted=0';
    assert.deepEqual(parseGcLine(`[123:0xa]    9 ms: [123:0xb]    9 ms: ${body}`), {
      isolate: '[123:0xb]',
      kind: 's',
      pauseMs: 0.9,
      allocated: 700,
    });
    assert.deepEqual(parseGcLine(body), { isolate: '', kind: 's', pauseMs: 0.9, allocated: 700 });
  });

  it('sums what came after a mark, by kind and over every isolate', () => {
    const trace = new GcTrace();
    trace.onLine(line('0xa', 's', 1, 100));
    const mark = trace.mark();
    trace.onLine(line('0xa', 's', 2, 1000));
    trace.onLine(line('0xb', 'mc', 7.5, 500));
    trace.onLine(line('0xb', 'mmc', 1, 20));
    trace.onLine('not a trace line');
    assert.deepEqual(trace.summary(mark), { bytes: 1520, scavenges: 1, markCompacts: 1, others: 1, maxPauseMs: 7.5, isolates: 2 });
  });
});

describe('judgedPairs', () => {
  it('judges one pair that holds, and three pairs by their medians when the first misses, keeping what each run left', async () => {
    const within = (ours: number, ceiling: number): boolean => ours <= 1.5 * ceiling;
    const held = await judgedPairs(async () => ({ p99_ms: 2, ceiling_p99_ms: 2, ours: 'only' }), within);
    assert.deepEqual([held.ok, held.runs.length, held.runs[0]!.ours], [true, 1, 'only']);
    const p99s = [9, 2.5, 2.9];
    let n = 0;
    const stalled = await judgedPairs(async () => ({ p99_ms: p99s[n]!, ceiling_p99_ms: 2, ours: n++ }), within);
    assert.deepEqual([stalled.ok, stalled.p99_ms, stalled.ceiling_p99_ms, stalled.runs.map((r) => r.ours)], [true, 2.9, 2, [0, 1, 2]]);
    const slow = await judgedPairs(async () => ({ p99_ms: 4, ceiling_p99_ms: 2, ours: null }), within, 5);
    assert.deepEqual([slow.ok, slow.runs.length], [false, 5]);
  });
});

describe('sustainedRate', () => {
  it('keeps the highest rate within the factor and stops at the first one missed', async () => {
    const tried: number[] = [];
    const s = await sustainedRate(1000, [0.5, 0.8, 1, 1.2], 2, async (target, rate) => {
      if (target === 'ours') tried.push(rate);
      return target === 'ceiling' ? 1 : rate <= 800 ? 1.5 : 9;
    });
    assert.equal(s.rate, 800);
    assert.deepEqual(tried, [500, 800, 1000, 1000, 1000]);
    assert.deepEqual(
      s.steps.map((x) => x.ok),
      [true, true, false],
    );
  });

  it('runs a missed step twice more and judges it on the medians, so one stall decides nothing', async () => {
    // The first pair at 500/s stalls the server (one run in three); at 800/s it misses two in three.
    const p99s = new Map<number, number[]>([
      [500, [40, 1.5, 1.6]],
      [800, [9, 1.5, 9]],
    ]);
    const calls: string[] = [];
    const s = await sustainedRate(1000, [0.5, 0.8, 1], 2, async (target, rate) => {
      calls.push(`${target}@${rate}`);
      return target === 'ceiling' ? 1 : p99s.get(rate)!.shift()!;
    });
    assert.equal(s.rate, 500);
    assert.deepEqual(
      s.steps.map((x) => [x.rate, x.p99_ms, x.ok, x.runs.length]),
      [
        [500, 1.6, true, 3],
        [800, 9, false, 3],
      ],
    );
    assert.deepEqual(calls.slice(0, 6), ['ceiling@500', 'ours@500', 'ceiling@500', 'ours@500', 'ceiling@500', 'ours@500']);
    assert.equal(calls.length, 12);
  });

  it('takes a step held on its first pair without running it again', async () => {
    let runs = 0;
    const s = await sustainedRate(1000, [0.5], 2, async () => {
      runs++;
      return 1;
    });
    assert.equal(runs, 2);
    assert.equal(s.steps[0]!.runs.length, 1);
  });

  it('refuses an even number of attempts', async () => {
    await assert.rejects(
      sustainedRate(1000, [0.5], 2, async () => 1, 2),
      /attempts must be an odd count, got 2/,
    );
  });
});

test('bench:tail --short runs both worker modes and the ceiling on the fixture build and reports every table', {
  timeout: 240_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-bench-tail-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const builds = await buildFixture(dir);
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawn(
    process.execPath,
    ['--import', join(ROOT, 'bin/register-typescript.js'), join(ROOT, 'bench/tail.bench.ts'), '--short', '--builds', builds],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  t.after(() => {
    if (run.exitCode === null) run.kill('SIGKILL');
  });
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  assert.equal(code, 0, `bench:tail --short failed:\n${stderr.slice(-4000)}`);
  assert.match(stderr, /workers 1 sent the same bytes for each/);
  const RATE = '[\\d.]+k?';
  const NUM = '[\\d.]+';
  const rows = (re: RegExp): string[] => stdout.split('\n').filter((l) => re.test(l));
  // Closed loop: every workload, both modes and the ceiling.
  for (const w of ['search', 'household', 'detail', 'years', 'aptc']) {
    for (const server of ['workers 0', 'workers 1']) {
      const row = new RegExp(
        `^\\| ${w} \\| ${server} \\| ${RATE} \\| ${NUM}× \\| (\\d+|not measured [^|]+) \\| (${NUM}) \\| \\d+ \\|$`,
        'm',
      ).exec(stdout);
      assert.ok(row !== null, `${w} / ${server} row:\n${stdout}`);
      // A 1 s run on a slow machine may see no collection: then the report must say so, not print 0.
      const bytes = row[1]!;
      assert.ok(
        bytes.startsWith('not measured') || Number(bytes) > 0,
        `${w} / ${server}: bytes allocated per request, or why not: ${bytes}`,
      );
    }
    assert.match(stdout, new RegExp(`^\\| ${w} \\| ceiling \\| ${RATE} \\| 1× \\|  \\|  \\|  \\|$`, 'm'), `${w} / ceiling row`);
  }
  // Open loop at 80 %: each workload and mode, with the ceiling's p99 beside it.
  for (const w of ['search', 'detail', 'aptc'])
    for (const server of ['workers 0', 'workers 1'])
      assert.match(
        stdout,
        new RegExp(`^\\| ${w} \\| ${server} \\| ${RATE}/s \\| ${NUM} \\| ${NUM} \\| ${NUM}× \\|$`, 'm'),
        `${w} / ${server} open-loop row`,
      );
  // The long run and the sustained rate, per mode; 1 and 2 workers unpinned.
  for (const server of ['workers 0', 'workers 1'])
    assert.match(
      stdout,
      new RegExp(
        `^\\| ${server} \\| ${RATE}/s \\| ${NUM} \\| ${NUM} \\| ${NUM}× \\| ${NUM} \\| ${NUM} \\| \\d+ \\| \\d+ \\| ${NUM} \\| ${RATE}/s \\|$`,
        'm',
      ),
      `${server} long-run row`,
    );
  // Each long run: how busy ours kept the core, and what the hypervisor stole from it.
  for (const server of ['workers 0', 'workers 1']) {
    const run = new RegExp(`^- ${server}: p99 ${NUM} ms, CPU (${NUM}) %, stolen ${NUM} % \\(ceiling's run: ${NUM} %\\)`, 'm').exec(stdout);
    assert.ok(run !== null, `${server} long-run shares:\n${stdout}`);
    assert.ok(Number(run[1]) > 0, `${server}: ours' CPU during its long run ${run[1]}`);
  }
  for (const server of ['workers 0', 'workers 1'])
    assert.match(stdout, new RegExp(`^- ${server}: ${RATE}: ${NUM} vs ${NUM} ms`, 'm'), `${server} sustained-rate steps`);
  for (const workers of [1, 2])
    assert.match(stdout, new RegExp(`^\\| ${workers} \\| ${RATE} \\| ${RATE}/s \\| ${RATE}: `, 'm'), `${workers} workers unpinned`);
  // What other memory traffic costs each handler: search and APTC, ours and the ceiling, at each level
  // (--short's 400 requests are too few for the figures: a difference may come out below zero).
  const FIG = `-?${NUM}`;
  for (const w of ['search', 'aptc'])
    for (const traffic of ['0', '262,144'])
      assert.match(
        stdout,
        new RegExp(`^\\| ${w} \\| ${traffic} \\| ${FIG} \\| ${FIG}× \\| ${FIG} \\| ${FIG}× \\| ${FIG} \\|$`, 'm'),
        `cache sensitivity ${w} / ${traffic}`,
      );
  // Resident memory: ours after the closed-loop runs and after the long run, the ceiling after its runs.
  for (const server of ['workers 0', 'workers 1'])
    assert.match(stdout, new RegExp(`^\\| ${server} \\| [1-9]\\d* \\| [1-9]\\d* \\| [1-9]\\d* \\|$`, 'm'), `${server} memory row`);
  assert.match(stdout, /^\| ceiling \| [1-9]\d* \| {2}\| [1-9]\d* \|$/m, 'ceiling memory row');
  // Per request, what the kernel sees: every cell a figure or why not. Search is traced under strace
  // (the prerequisites install it), so its syscalls, sends and bytes are there; --short leaves APTC's out.
  const FIGURE = '[\\d.]+(?:e-\\d+)?';
  const WHY = 'not measured \\([^|]+\\)';
  assert.match(
    stdout,
    /^\| workload \| server \| user µs \| sys µs \| syscalls \| send calls \| bytes to the kernel \| voluntary switches \| involuntary switches \| migrations \|$/m,
    'the kernel table',
  );
  for (const w of ['search', 'aptc']) {
    for (const server of ['workers 0', 'workers 1', 'ceiling']) {
      const row = new RegExp(`^\\| ${w} \\| ${server} \\|((?: (?:${FIGURE}|${WHY}) \\|){8})$`, 'm').exec(stdout);
      assert.ok(row !== null, `kernel row ${w} / ${server}:\n${stdout}`);
      const cells = row[1]!
        .split('|')
        .slice(0, -1)
        .map((c) => c.trim());
      // A full-load run always costs CPU, whatever the machine.
      assert.ok(Number(cells[0]) + Number(cells[1]) > 0, `${w} / ${server}: CPU per request ${cells.slice(0, 2)}`);
      const traced = cells.slice(2, 5);
      if (w === 'search') for (const c of traced) assert.ok(Number(c) > 0, `${w} / ${server}: syscalls, sends, bytes ${traced}`);
      else assert.deepEqual(traced, Array(3).fill('not measured (--short traces search only)'));
    }
    for (const server of ['workers 0', 'workers 1'])
      assert.match(
        stdout,
        new RegExp(`^\\| ${w} \\| ${server} ÷ ceiling \\|(?: (?:${FIGURE}×|n/a \\((?:both|ceiling) 0\\)|${WHY}) \\|){8}$`, 'm'),
        `kernel ratio row ${w} / ${server}`,
      );
  }
  for (const server of ['workers 0', 'workers 1', 'ceiling'])
    assert.match(
      stdout,
      new RegExp(`^- search, ${server} \\(\\d+ and \\d+ requests traced\\): \\w+ ${FIGURE}`, 'm'),
      `top syscalls of ${server}`,
    );
  // Where a search's CPU goes: three rows of figures; the cached server's hit rate read from its metrics.
  for (const name of [
    'ceiling \\(replays the recorded bytes\\)',
    'ours, every answer from the search cache \\([\\d.]+ % hits\\): the pipeline alone',
    'ours, every search computed',
  ]) {
    const row = new RegExp(`^\\| ${name} \\| (${FIGURE}) \\| (${FIGURE}) \\| (${FIGURE}) \\| ${FIGURE}× \\|$`, 'm').exec(stdout);
    assert.ok(row !== null, `budget row ${name}:\n${stdout}`);
    assert.ok(Number(row[3]) > 0, `${name}: CPU per request`);
  }
  assert.match(stdout, new RegExp(`^- The search and its page: -?${FIGURE} µs a request\\.$`, 'm'), 'the search part');
  assert.match(stdout, /^- Search ≥ 0\.5× the ceiling's requests\/s allows [\d.]+ µs a request in all; /m, 'the budget line');
  // The targets: 14 per mode, and the default mode's sustained rate; each measured (or said to be
  // unmeasured) and judged.
  const targets = rows(/^\| workers [01]: /);
  assert.equal(targets.length, 29, targets.join('\n'));
  for (const row of targets) assert.match(row, /\| ([\d.]+|not measured [^|]+) \| ([≤≥] )?[\d.]+ \| (met|\*\*missed\*\*) \|$/);
  assert.match(stdout, /\| workers 0: search p99 at 80 % ÷ ceiling \| [\d.]+ \|/);
  assert.match(stdout, /\| workers 1: mark-compacts in \d+ s of search at 80 % \| \d+ \|/);
  assert.match(stdout, /\| workers 0: search p99 over \d+ s at 80 % ÷ ceiling \| [\d.]+ \| ≤ 1.5 \|/);
  assert.match(stdout, /\| workers 1: sustained search rate ÷ closed-loop search rate \| [\d.]+ \| ≥ 0.6 \|/);
});
