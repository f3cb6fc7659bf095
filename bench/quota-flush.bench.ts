/**
 * @module `npm run bench:quota-flush`: what the owner of the shared daily quota (the main thread of
 * `hpd serve --workers N`, N ≥ 1) spends on each save, which runs every 25 ms while requests are
 * counted, as a function of how many users have been counted today. Each run counts N distinct users,
 * saves them, then times flushes that each find one user changed (tinybench), against a state store
 * that answers at once: what is measured is the owner's own walk, not LMDB's commit. Target: at the
 * table's capacity a flush stays under 1 ms (4 % of a core at one per 25 ms).
 */
import { Bench } from 'tinybench';
import { benchArgs } from './lib/bench-args.ts';
import { DEFAULT_CAPACITY } from '../src/policy/shared-counters.ts';
import { SharedDailyQuota } from '../src/policy/shared-quota.ts';
import type { StateStore } from '../src/policy/state-store.ts';
import { DEFAULT_DAILY_LIMITS } from '../src/policy/tiers.ts';

benchArgs(
  'bench:quota-flush',
  `Usage: npm run bench:quota-flush [--help]

What the shared quota's owner spends on each save (every 25 ms under load), by users counted today:
1, 1,000, 10,000 and ${(DEFAULT_CAPACITY - 1).toLocaleString('en-US')}; target ≤ 1 ms at the table's capacity. No options.`,
  {},
);

const NOON = Date.parse('2026-11-20T12:00:00Z');
const USERS = [1, 1_000, 10_000, DEFAULT_CAPACITY - 1];
const TARGET_MS = 1;

let saved = 0;
const store = {
  loadCounters: () => new Map<string, number>(),
  saveCounters: async (_day: string, entries: ReadonlyMap<string, number>) => {
    saved += entries.size;
  },
} as unknown as StateStore;

const rows: Array<{ users: number; medianMs: number; share: number; savedPerFlush: number }> = [];
for (const users of USERS) {
  const q = SharedDailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, enterprise: 1e9 }, () => NOON, { flushDelayMs: 3_600_000 });
  for (let i = 0; i < users; i++) q.consume(`usr_${i.toString(36).padStart(12, '0')}`, 'enterprise');
  await q.flush();
  saved = 0;
  let flushes = 0;
  const bench = new Bench({ time: 500, warmupTime: 100 });
  bench.add(`${users} users`, async () => {
    q.consume('usr_000000000000', 'enterprise');
    await q.flush();
    flushes++;
  });
  await bench.run();
  // tinybench's result type is a union with its aborted state; this task is never aborted.
  const r = bench.tasks[0]!.result as unknown as { latency: { p50: number } };
  const medianMs = r.latency.p50;
  rows.push({ users, medianMs, share: medianMs / 25, savedPerFlush: saved / flushes });
  await q.close();
}

const lines = [
  '| users counted today | flush with one change, median ms | share of a core at one flush per 25 ms | ÷ 1 user | users saved per flush |',
  '|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.users.toLocaleString('en-US')} | ${r.medianMs.toFixed(4)} | ${(100 * r.share).toFixed(2)} % | ${(r.medianMs / rows[0]!.medianMs).toFixed(1)}× | ${r.savedPerFlush.toFixed(0)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
const worst = rows[rows.length - 1]!;
const met = worst.medianMs <= TARGET_MS;
process.stdout.write(
  `\n${worst.users.toLocaleString('en-US')} users: ${worst.medianMs.toFixed(3)} ms per flush, target ≤ ${TARGET_MS} ms: ${met ? 'met' : 'MISSED'}\n`,
);
if (!met) process.exitCode = 1;
