/**
 * bench/lib/proc-stats.ts: the /proc files of a thread read field by field (a thread's name may hold
 * spaces and parentheses), two snapshots turned into figures per request with threads that started or
 * ended between them, and a snapshot of this very process seeing the CPU it burns and the thread it starts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import {
  type ProcSnapshot,
  parseResident,
  parseSched,
  parseStat,
  parseStatus,
  perRequest,
  resident,
  snapshot,
  type TaskCounters,
  ticksPerSecond,
} from '../../bench/lib/proc-stats.ts';

/** A thread's stat line as Linux 6.1 prints it (utime 4711, stime 815), with the name swapped for `name`. */
const statLine = (name: string): string =>
  `10924 (${name}) S 10920 10920 10300 0 -1 4194368 92 0 0 0 4711 815 0 0 20 0 8 0 2565700 1184534528 12345 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 -1 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n`;

const STATUS = `Name:\tnode
Umask:\t0022
State:\tS (sleeping)
Tgid:\t10920
Pid:\t10924
VmHWM:\t  143212 kB
VmRSS:\t  118040 kB
Threads:\t8
voluntary_ctxt_switches:\t689
nonvoluntary_ctxt_switches:\t107
`;

const SCHED = `node (10924, #threads: 8)
-------------------------------------------------------------------
se.exec_start                                :      25570605.430607
se.vruntime                                  :      20328494.261632
se.sum_exec_runtime                          :           139.447332
se.nr_migrations                             :                  144
nr_switches                                  :                  796
nr_voluntary_switches                        :                  689
nr_involuntary_switches                      :                  107
`;

describe('parsing /proc/PID/task/TID files', () => {
  it('reads utime and stime counting from the last parenthesis, whatever the name holds', () => {
    for (const name of ['node', 'DelayedTaskSche', 'a b c', 'x) S 1 2 (y', ')(', '(node) (worker 1)']) {
      assert.deepEqual(parseStat(statLine(name)), { userTicks: 4711, sysTicks: 815 }, name);
    }
  });

  it('refuses a line that is not a stat line rather than read zeros', () => {
    assert.throws(() => parseStat('Name:\tnode\n'), /not a \/proc stat line/);
    assert.throws(() => parseStat('1 (x) S 0'), /no utime\/stime/);
  });

  it('reads voluntary and involuntary switches from status, and migrations from sched', () => {
    assert.deepEqual(parseStatus(STATUS), { voluntary: 689, involuntary: 107 });
    assert.throws(() => parseStatus('Name:\tnode\n'), /no voluntary_ctxt_switches/);
    assert.equal(parseSched(SCHED), 144);
    assert.equal(parseSched('node (1, #threads: 1)\n'), null);
  });

  it('reads resident memory now and at its peak from status, in bytes', () => {
    assert.deepEqual(parseResident(STATUS), { rssBytes: 118040 * 1024, peakBytes: 143212 * 1024 });
    assert.throws(() => parseResident('Name:\tnode\nVmRSS:\t 1 kB\n'), /no VmHWM/);
  });
});

describe('perRequest', () => {
  const task = (userTicks: number, sysTicks: number, voluntary: number, involuntary: number, migrations: number | null): TaskCounters => ({
    userTicks,
    sysTicks,
    voluntary,
    involuntary,
    migrations,
  });
  /** A snapshot of process 7 from rows of [thread id, user ticks, system ticks, voluntary, involuntary, migrations]. */
  const snap = (rows: ReadonlyArray<readonly [number, number, number, number, number, number | null]>): ProcSnapshot => ({
    pid: 7,
    tasks: new Map(rows.map(([tid, ...counters]) => [tid, task(...counters)])),
  });

  it('sums the differences of every thread and divides by the requests', () => {
    const before = snap([
      [7, 100, 50, 10, 1, 3],
      [8, 20, 5, 100, 0, 0],
    ]);
    const after = snap([
      [7, 300, 90, 1010, 21, 3],
      [8, 40, 15, 2100, 0, 2],
    ]);
    // 220 user ticks and 50 system ticks at 100 Hz (2.2 s and 0.5 s) over 1,000 requests.
    const expected = { requests: 1000, userUs: 2200, sysUs: 500, voluntary: 3, involuntary: 0.02, migrations: 0.002 };
    assert.deepEqual(perRequest(before, after, 1000, 100), { ...expected, threadsStarted: 0, threadsEnded: 0 });
  });

  it('counts a thread that started in between with all it has, and one that ended with nothing', () => {
    const r = perRequest(
      snap([
        [7, 100, 0, 0, 0, 0],
        [9, 500, 500, 500, 500, 500],
      ]),
      snap([
        [7, 200, 0, 10, 0, 0],
        [10, 100, 100, 30, 10, 1],
      ]),
      100,
      100,
    );
    // Thread 10 brings all of its counts, thread 9 none: (100 + 100) user ticks, 100 system ticks, 40 switches...
    assert.deepEqual([r.userUs, r.sysUs, r.voluntary, r.involuntary, r.migrations], [20_000, 10_000, 0.4, 0.1, 0.01]);
    assert.deepEqual([r.threadsStarted, r.threadsEnded], [1, 1]);
  });

  it('says migrations are unknown when a thread has no sched file, and refuses nonsense', () => {
    const before = snap([[7, 0, 0, 0, 0, null]]);
    const after = snap([[7, 1, 1, 1, 1, null]]);
    assert.equal(perRequest(before, after, 1, 100).migrations, null);
    assert.throws(() => perRequest(before, after, 0, 100), /no requests/);
    assert.throws(() => perRequest(before, { pid: 8, tasks: new Map() }, 1, 100), /two processes/);
  });
});

describe('snapshot of a live process', () => {
  it('sees every thread of this process, the CPU it burns and a worker it starts', async () => {
    const before = snapshot(process.pid);
    assert.ok(before.tasks.has(process.pid), 'the main thread is a task of its own process');
    const worker = new Worker('require("node:worker_threads").parentPort.postMessage("up"); setInterval(() => {}, 1000);', { eval: true });
    await new Promise((resolve) => worker.once('message', resolve));
    // 300 ms of CPU in this thread: 30 ticks at 100 Hz, whatever the machine's speed.
    const t0 = process.cpuUsage();
    while (process.cpuUsage(t0).user < 300_000) Math.sqrt(Math.random());
    const after = snapshot(process.pid);
    await worker.terminate();
    const r = perRequest(before, after, 1);
    assert.ok(r.threadsStarted >= 1, `the worker's thread counts as started: ${JSON.stringify(r)}`);
    assert.ok(r.userUs + r.sysUs >= 250_000, `the CPU burnt shows: ${JSON.stringify(r)}`);
    assert.ok(r.voluntary + r.involuntary >= 1, `waiting for the worker switched: ${JSON.stringify(r)}`);
    assert.ok(ticksPerSecond() > 0);
  });

  it('reads the resident memory of this process, its peak at least what it holds now', () => {
    const r = resident(process.pid);
    const heldByV8 = process.memoryUsage().rss;
    assert.ok(r.rssBytes > 10 * 2 ** 20 && r.peakBytes >= r.rssBytes, JSON.stringify(r));
    // The same figure as Node's own, within what can change between the two reads.
    assert.ok(Math.abs(r.rssBytes - heldByV8) < 16 * 2 ** 20, `${r.rssBytes} against process.memoryUsage().rss ${heldByV8}`);
  });

  it('throws for a process that does not exist', () => {
    assert.throws(() => snapshot(2 ** 22 + 1), /ENOENT/);
  });
});
