/**
 * bench/lib/core-time.ts: one CPU's busy, idle and stolen ticks read from `/proc/stat`, and their shares
 * over an interval; the live file reads too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { availableParallelism } from 'node:os';
import { coreShares, coreTicks, parseCoreTicks } from '../../bench/lib/core-time.ts';

const STAT = `cpu  5887708 7334 948907 4630039 39994 0 237976 16241 0 0
cpu0 2488373 3735 485893 2769843 8869 0 75643 7993 0 0
cpu1 3399335 3598 463014 1860195 31124 0 162333 8247 0 0
intr 1 2 3
ctxt 42
`;

describe('core-time', () => {
  it('reads one CPU, or all of them, as busy (user, nice, system, irq, softirq), idle (with iowait) and stolen', () => {
    assert.deepEqual(parseCoreTicks(STAT, 1), {
      busy: 3399335 + 3598 + 463014 + 0 + 162333,
      idle: 1860195 + 31124,
      steal: 8247,
    });
    assert.deepEqual(parseCoreTicks(STAT, null), {
      busy: 5887708 + 7334 + 948907 + 0 + 237976,
      idle: 4630039 + 39994,
      steal: 16241,
    });
  });

  it('refuses a CPU the file does not list, and a line it cannot read', () => {
    assert.throws(() => parseCoreTicks(STAT, 7), /no line for cpu7/);
    assert.throws(() => parseCoreTicks('cpu3 1 2 x 4 5 6 7 8 0 0\n', 3), /unreadable line for cpu3/);
  });

  it('gives the shares of an interval, and zeros when no tick passed', () => {
    const before = { busy: 100, idle: 50, steal: 10 };
    assert.deepEqual(coreShares(before, { busy: 180, idle: 60, steal: 20 }), { busy: 0.8, idle: 0.1, steal: 0.1 });
    assert.deepEqual(coreShares(before, before), { busy: 0, idle: 0, steal: 0 });
  });

  it('reads this machine: every CPU and the sum, whose counters never go back', () => {
    const all = coreTicks(null);
    for (let cpu = 0; cpu < availableParallelism(); cpu++) {
      const one = coreTicks(cpu);
      assert.ok(one.busy + one.idle > 0 && one.busy <= all.busy && one.steal <= all.steal, `cpu${cpu}`);
    }
    const later = coreTicks(null);
    assert.ok(later.busy >= all.busy && later.idle >= all.idle && later.steal >= all.steal);
  });
});
