/**
 * bench/lib/kernel-report.ts: the table "Per request, what the kernel sees" takes medians over the timed
 * runs, divides ours by the ceiling cell by cell, and says in each cell without a figure why.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fmtFigure, kernelTable } from '../../bench/lib/kernel-report.ts';
import type { PerRequestStats } from '../../bench/lib/proc-stats.ts';
import type { SyscallProfile } from '../../bench/lib/syscall-profile.ts';

const run = (userUs: number, sysUs: number, voluntary: number, migrations: number | null, threadsEnded = 0): PerRequestStats => ({
  requests: 1000,
  userUs,
  sysUs,
  voluntary,
  involuntary: 0.01,
  migrations,
  threadsStarted: 0,
  threadsEnded,
});

const profile = (syscalls: number, sendCalls: number, bytes: number): SyscallProfile => ({
  countRequests: 5000,
  syscalls,
  top: [
    { name: 'epoll_pwait', perRequest: 0.5 },
    { name: 'writev', perRequest: 1 },
  ],
  sendRequests: 4000,
  sendCalls,
  bytes,
  failedSends: 0,
  otherWrites: 0.25,
});

describe('kernelTable', () => {
  it('prints medians of the runs, the traced counts, and ours ÷ the ceiling per cell', () => {
    const lines = kernelTable([
      {
        workload: 'search',
        servers: [
          { server: 'workers 0', runs: [run(30, 9, 0.2, 0), run(34, 10, 0.1, 0), run(31, 12, 0.3, 0)], syscalls: profile(4, 1, 2400) },
          { server: 'ceiling', runs: [run(10, 5, 0.1, 0)], syscalls: profile(2, 1, 2400) },
        ],
      },
    ]);
    assert.equal(
      lines[0],
      '| workload | server | user µs | sys µs | syscalls | send calls | bytes to the kernel | voluntary switches | involuntary switches | migrations |',
    );
    assert.equal(lines[2], '| search | workers 0 | 31 | 10 | 4 | 1 | 2400 | 0.2 | 0.01 | 0 |');
    assert.equal(lines[3], '| search | ceiling | 10 | 5 | 2 | 1 | 2400 | 0.1 | 0.01 | 0 |');
    assert.equal(lines[4], '| search | workers 0 ÷ ceiling | 3.1× | 2× | 2× | 1× | 1× | 2× | 1× | n/a (both 0) |');
    assert.ok(
      lines.includes(
        '- search, workers 0 (5000 and 4000 requests traced): epoll_pwait 0.5, writev 1; writes to eventfds and pipes 0.25, failed sends (EAGAIN…) 0',
      ),
      lines.join('\n'),
    );
  });

  it('says why a cell has no figure, and notes threads that ended during the runs', () => {
    const lines = kernelTable(
      [
        {
          workload: 'aptc',
          servers: [
            { server: 'workers 1', runs: [run(40, 10, 0.5, null, 2)], syscalls: { unavailable: 'strace could not attach: a | b' } },
            { server: 'ceiling', runs: [run(10, 5, 0.1, 0)], syscalls: null },
          ],
        },
      ],
      '--short traces search only',
    );
    const noSched = 'not measured (no /proc/PID/task/TID/sched: kernel without CONFIG_SCHED_DEBUG)';
    assert.equal(
      lines[2],
      `| aptc | workers 1 | 40 | 10 | ${Array(3).fill('not measured (strace could not attach: a / b)').join(' | ')} | 0.5 | 0.01 | ${noSched} |`,
    );
    assert.equal(
      lines[3],
      `| aptc | ceiling | 10 | 5 | ${Array(3).fill('not measured (--short traces search only)').join(' | ')} | 0.1 | 0.01 | 0 |`,
    );
    assert.match(lines[4]!, /^\| aptc \| workers 1 ÷ ceiling \| 4× \| 2× \| not measured \(a side is missing\) \|/);
    assert.ok(
      lines.includes('- aptc, workers 1: 2 threads ended during the timed runs; their last moments are not counted.'),
      lines.join('\n'),
    );
  });

  it('prints figures with three significant digits, whole from 1,000, tiny in exponent form', () => {
    assert.deepEqual([0, 1234.5, 31.04, 0.12345, 0.000412, 0.00004].map(fmtFigure), ['0', '1235', '31', '0.123', '0.000412', '4.0e-5']);
  });
});
