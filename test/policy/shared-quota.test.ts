/**
 * The daily quota shared by every thread: exact across real worker threads (never a success above the
 * limit, never a refusal below it), persisted by its owner and reloaded after a restart, reset at
 * 00:00 UTC, and correct for many distinct users.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { CounterTable, MAX_ID_BYTES } from '../../src/policy/shared-counters.ts';
import { SharedDailyQuota } from '../../src/policy/shared-quota.ts';
import { DEFAULT_DAILY_LIMITS } from '../../src/policy/tiers.ts';

const HOOKS = new URL('../../bin/register-typescript.js', import.meta.url).href;
const NOON = Date.parse('2026-11-20T12:00:00Z');

function hammer(
  descriptor: unknown,
  userIds: string[],
  tier: string,
  count: number,
  now: number,
): Promise<{ allowed: number[]; refused: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('../helpers/quota-worker.ts', import.meta.url), {
      workerData: { descriptor, userIds, tier, count, now },
      execArgv: ['--import', HOOKS],
    });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

/** A state store in a temporary directory, closed after the quotas registered with `closeFirst`. */
function tempStore(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-shared-quota-'));
  const store = openLmdbStateStore(dir);
  const quotas: SharedDailyQuota[] = [];
  t.after(async () => {
    for (const q of quotas) await q.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store, closeFirst: (q: SharedDailyQuota) => quotas.push(q) };
}

for (const [threads, limit, attempts] of [
  [4, 100, 400],
  [2, 10_000, 45_000],
] as const) {
  test(`${threads} worker threads and the owner, ${attempts} attempts on one user with a limit of ${limit}: exactly ${limit} allowed`, {
    timeout: 60_000,
  }, async (t) => {
    const { store, closeFirst } = tempStore(t);
    const q = SharedDailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, free: limit }, () => NOON);
    closeFirst(q);
    const per = attempts / (threads + 1);
    const runs = Array.from({ length: threads }, () => hammer(q.descriptor(), ['user-x'], 'free', per, NOON));
    let ownerAllowed = 0;
    for (let i = 0; i < per; i++) if (q.consume('user-x', 'free').allowed) ownerAllowed++;
    const results = await Promise.all(runs);
    const allowed = ownerAllowed + results.reduce((n, r) => n + r.allowed.length, 0);
    assert.equal(allowed, limit);
    assert.equal(results.reduce((n, r) => n + r.refused, 0) + (per - ownerAllowed), attempts - limit);
    // Every allowed request saw a distinct remaining value: no two successes shared a count.
    const remaining = results.flatMap((r) => r.allowed);
    assert.equal(new Set(remaining).size, remaining.length);
    assert.equal(q.peek('user-x', 'free').remaining, 0);
  });
}

test('10,000 distinct users across 2 threads: every user counted exactly', { timeout: 60_000 }, async (t) => {
  const { store, closeFirst } = tempStore(t);
  const q = SharedDailyQuota.open(store, DEFAULT_DAILY_LIMITS, () => NOON);
  closeFirst(q);
  const users = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
  await Promise.all([hammer(q.descriptor(), users, 'pro', 30_000, NOON), hammer(q.descriptor(), users, 'pro', 30_000, NOON)]);
  for (const u of ['user-0', 'user-1', 'user-4242', 'user-9999']) assert.equal(q.peek(u, 'pro').remaining, DEFAULT_DAILY_LIMITS.pro - 6);
});

test('the owner saves counts within ~50 ms; a restarted owner continues from them; a new UTC day starts at 0', {
  timeout: 30_000,
}, async (t) => {
  const { store, closeFirst } = tempStore(t);
  let now = NOON;
  const q = SharedDailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, free: 5 }, () => now);
  for (let i = 0; i < 3; i++) assert.ok(q.consume('user-a', 'free').allowed);
  await eventually('saved by the timer', () => store.loadCounters('2026-11-20').get('user-a') === 3, 150);
  await q.close();

  const q2 = SharedDailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, free: 5 }, () => now);
  closeFirst(q2);
  assert.ok(q2.consume('user-a', 'free').allowed);
  assert.ok(q2.consume('user-a', 'free').allowed);
  const refused = q2.consume('user-a', 'free');
  assert.equal(refused.allowed, false);
  assert.equal(refused.retryAfterSeconds, 12 * 3600);
  // An upgrade raises the allowance at once.
  assert.ok(q2.consume('user-a', 'pro').allowed);

  now = Date.parse('2026-11-21T00:00:01Z');
  const next = q2.consume('user-a', 'free');
  assert.equal(next.allowed, true);
  assert.equal(next.remaining, 4, 'the new day starts from zero');
  await q2.flush();
  assert.equal(store.loadCounters('2026-11-21').get('user-a'), 1);
  assert.equal(store.loadCounters('2026-11-20').get('user-a'), 6, "yesterday's final count was saved too");
});

test('the counter table compares ids exactly and reports a full table', () => {
  const table = CounterTable.create(4);
  table.ensureDay(1);
  const slots = ['a', 'b', 'c', 'd'].map((id) => table.slotOf(id, true));
  assert.deepEqual(new Set(slots).size, 4);
  assert.equal(table.slotOf('e', true), -1, 'full');
  assert.equal(table.slotOf('b', false), slots[1]);
  assert.equal(table.slotOf('x'.repeat(MAX_ID_BYTES + 1), true), -1, 'an id too long for the table');
  assert.deepEqual([...table.entries()].map(([id]) => id).sort(), ['a', 'b', 'c', 'd']);
});

/** A state store that records every save and can hold the next one until released. */
function recordingStore(loaded: Map<string, number> = new Map()) {
  const saves: Array<[string, Map<string, number>]> = [];
  let hold: Promise<void> | null = null;
  let onSave: () => void = () => {};
  const store = {
    loadCounters: (day: string) => (day === '2026-11-20' ? new Map(loaded) : new Map<string, number>()),
    saveCounters: async (day: string, entries: ReadonlyMap<string, number>) => {
      saves.push([day, new Map(entries)]);
      onSave();
      if (hold !== null) await hold;
    },
  } as unknown as Parameters<typeof SharedDailyQuota.open>[0];
  return {
    store,
    saves,
    holdSaves(): () => void {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return () => {
        hold = null;
        release();
      };
    },
    afterEachSave(fn: () => void) {
      onSave = fn;
    },
  };
}

test('a flush saves the users whose count changed since the last save, and no one else', async (t) => {
  const s = recordingStore(new Map([['loaded', 7]]));
  const q = SharedDailyQuota.open(s.store, DEFAULT_DAILY_LIMITS, () => NOON, { flushDelayMs: 3_600_000 });
  t.after(() => q.close());
  await q.flush();
  assert.deepEqual(s.saves, [], 'counts loaded at start are not written back');
  for (const u of ['a', 'b', 'c']) q.consume(u, 'free');
  await q.flush();
  q.consume('b', 'free');
  q.consume('loaded', 'free');
  await q.flush();
  await q.flush();
  assert.deepEqual(s.saves, [
    [
      '2026-11-20',
      new Map([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]),
    ],
    [
      '2026-11-20',
      new Map([
        ['b', 2],
        ['loaded', 8],
      ]),
    ],
  ]);
});

test('a table reused for a later day is saved from scratch: its users are read anew, under the new day', async (t) => {
  const s = recordingStore();
  let now = NOON;
  const q = SharedDailyQuota.open(s.store, DEFAULT_DAILY_LIMITS, () => now, { flushDelayMs: 3_600_000 });
  t.after(() => q.close());
  // Two days on, the same table (day parity) holds other users in the slots the first day's had.
  q.consume('first', 'free');
  await q.flush();
  now = Date.parse('2026-11-22T08:00:00Z');
  q.consume('second', 'free');
  await q.flush();
  assert.deepEqual(s.saves, [
    ['2026-11-20', new Map([['first', 1]])],
    ['2026-11-22', new Map([['second', 1]])],
  ]);
});

/** Lets the owner's wake-up (a task posted by Atomics.notify) and the promise turns after it run. */
async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

test('a save stalled in the store queues nothing: after it returns, the counts made meanwhile are saved once', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = recordingStore();
  const q = SharedDailyQuota.open(s.store, DEFAULT_DAILY_LIMITS, () => NOON, { flushDelayMs: 25 });
  const flushes = t.mock.method(q, 'flush');
  let closed = false;
  t.after(async () => {
    s.afterEachSave(() => {});
    if (!closed) await q.close();
  });
  // Every save is followed by a use, so any flush that runs has something to save.
  s.afterEachSave(() => q.consume('user', 'free'));
  q.consume('user', 'free');
  await settle();
  const release = s.holdSaves();
  t.mock.timers.tick(25);
  await settle();
  assert.equal(s.saves.length, 1, 'the save after the first use runs (and stalls)');
  // 1.25 s while the store does not answer, with uses all along (the free tier's limit is 100).
  for (let i = 0; i < 50; i++) {
    q.consume('user', 'free');
    t.mock.timers.tick(25);
    await settle(1);
  }
  assert.equal(flushes.mock.callCount(), 1, 'no flush started behind the stalled one');
  release();
  await settle(20);
  t.mock.timers.tick(25);
  await settle();
  assert.equal(s.saves.length, 2, 'the uses made meanwhile are saved in one save');
  assert.deepEqual(s.saves[1], ['2026-11-20', new Map([['user', 52]])]);
  s.afterEachSave(() => {});
  closed = true;
  await q.close();
});

test('an idle owner sleeps: no flush until a thread counts, then one save of it', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = recordingStore();
  const q = SharedDailyQuota.open(s.store, DEFAULT_DAILY_LIMITS, () => NOON, { flushDelayMs: 25 });
  t.after(() => q.close());
  const flushes = t.mock.method(q, 'flush');
  // 10 s of an idle server.
  for (let i = 0; i < 400; i++) {
    t.mock.timers.tick(25);
    await settle(1);
  }
  assert.equal(flushes.mock.callCount(), 0, 'nothing counted, nothing run');
  // A count in another thread wakes the owner through the shared flag.
  const other = SharedDailyQuota.attach(q.descriptor(), () => NOON);
  other.consume('worker-user', 'free');
  await settle();
  t.mock.timers.tick(25);
  await settle();
  assert.equal(flushes.mock.callCount(), 1);
  assert.deepEqual(s.saves, [['2026-11-20', new Map([['worker-user', 1]])]]);
  for (let i = 0; i < 400; i++) {
    t.mock.timers.tick(25);
    await settle(1);
  }
  assert.equal(flushes.mock.callCount(), 1, 'idle again after the save');
});
