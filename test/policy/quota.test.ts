/**
 * The daily quota (docs/compatibility.md#daily-counter) with an injected clock: exhaustion without counting refusals, the
 * midnight-UTC reset, exact reset/retry values, persistence across restarts, the bounded background
 * save, plus the tier limits and the rate-limit headers built from a decision.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.ts';
import { cleanup, tempDir } from '../helpers/test-cleanup.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { DailyQuota, DEFAULT_FLUSH_DELAY_MS } from '../../src/policy/quota.ts';
import { rateLimitHeaders } from '../../src/policy/rate-limit-headers.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { serveConfig } from '../../src/config/serve-config.ts';
import { DEFAULT_DAILY_LIMITS, TIER_RANK, TIERS, type Tier } from '../../src/policy/tiers.ts';

const dailyLimits = (env: NodeJS.ProcessEnv): Readonly<Record<Tier, number>> => serveConfig(env).limits;

const LIMITS = dailyLimits({ HPD_QUOTA_FREE: '3', HPD_QUOTA_PRO: '5' });
/** 2026-11-21T00:00:00Z, the RateLimit-Reset of the public docs' 429 example. */
const NEXT_MIDNIGHT_S = 1_795_219_200;

/** `real` with some methods replaced (the others stay bound to `real`, whose fields are private). */
function withOverrides(real: StateStore, overrides: Partial<StateStore>): StateStore {
  return new Proxy(real, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return Reflect.get(overrides, prop);
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Opens a store that the test may close itself; otherwise it is closed after the test. */
function openStore(defer: (fn: () => unknown) => void, dir: string): StateStore {
  const store = openLmdbStateStore(dir);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= store.close());
  defer(close);
  return withOverrides(store, { close });
}

/** Lets the promise jobs a fired timer started run (setImmediate is not among the mocked timers). */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A settable clock. */
function clockAt(iso: string): { now: () => number; set: (iso: string) => void } {
  let ms = Date.parse(iso);
  return { now: () => ms, set: (next) => (ms = Date.parse(next)) };
}

test('limit 3: three calls allowed, the fourth refused with remaining 0, and the refusal is not counted', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-quota-'));
  const clock = clockAt('2026-11-20T10:00:00.000Z');
  const quota = DailyQuota.open(store, LIMITS, clock.now);
  defer(() => quota.close());
  assert.deepEqual(
    [1, 2, 3].map(() => quota.consume('usr_a', 'free').remaining),
    [2, 1, 0],
  );
  const refused = quota.consume('usr_a', 'free');
  assert.equal(refused.allowed, false);
  assert.equal(refused.limit, 3);
  assert.equal(refused.remaining, 0);
  quota.consume('usr_a', 'free');
  await quota.flush();
  assert.equal(store.loadCounters('2026-11-20').get('usr_a'), 3, 'refusals are not counted');
  assert.deepEqual(quota.peek('usr_a', 'free'), { ...refused });
  // Another user has their own counter; the same user on a higher tier gets the higher allowance.
  assert.equal(quota.consume('usr_b', 'free').remaining, 2);
  const upgraded = quota.consume('usr_a', 'pro');
  assert.deepEqual([upgraded.allowed, upgraded.limit, upgraded.remaining], [true, 5, 1]);
});

test('peek reports without counting', (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-quota-'));
  const quota = DailyQuota.open(store, LIMITS, clockAt('2026-11-20T10:00:00.000Z').now);
  defer(() => quota.close());
  assert.equal(quota.peek('usr_a', 'free').remaining, 3);
  assert.equal(quota.peek('usr_a', 'free').remaining, 3);
  assert.equal(quota.consume('usr_a', 'free').remaining, 2);
  assert.equal(quota.peek('usr_a', 'free').allowed, true);
});

test('resetEpochSeconds is the next 00:00 UTC and retryAfterSeconds the whole seconds until it, rounded up', (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-quota-'));
  const clock = clockAt('2026-11-20T15:19:26.000Z');
  const quota = DailyQuota.open(store, LIMITS, clock.now);
  defer(() => quota.close());
  const d = quota.consume('usr_a', 'free');
  assert.equal(d.resetEpochSeconds, NEXT_MIDNIGHT_S);
  assert.equal(d.retryAfterSeconds, 31_234, 'the public docs example: Retry-After 31234 at 15:19:26Z');
  clock.set('2026-11-20T15:19:26.400Z');
  assert.equal(quota.consume('usr_a', 'free').retryAfterSeconds, 31_234, '31233.6 s rounds up');
  clock.set('2026-11-20T00:00:00.000Z');
  assert.deepEqual(
    [quota.peek('usr_a', 'free').resetEpochSeconds, quota.peek('usr_a', 'free').retryAfterSeconds],
    [NEXT_MIDNIGHT_S, 86_400],
  );
});

test('the counter resets at midnight UTC: 23:59:59.999 refused, 00:00:00.000 the next day allowed', (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-quota-'));
  const clock = clockAt('2026-11-20T23:59:58.000Z');
  const quota = DailyQuota.open(store, LIMITS, clock.now);
  defer(() => quota.close());
  for (let i = 0; i < 3; i++) quota.consume('usr_a', 'free');
  clock.set('2026-11-20T23:59:59.999Z');
  const before = quota.consume('usr_a', 'free');
  assert.deepEqual(before, { allowed: false, limit: 3, remaining: 0, resetEpochSeconds: NEXT_MIDNIGHT_S, retryAfterSeconds: 1 });
  clock.set('2026-11-21T00:00:00.000Z');
  const after = quota.consume('usr_a', 'free');
  assert.deepEqual(after, {
    allowed: true,
    limit: 3,
    remaining: 2,
    resetEpochSeconds: NEXT_MIDNIGHT_S + 86_400,
    retryAfterSeconds: 86_400,
  });
});

test('counts survive closing and reopening the store (a restart)', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-quota-');
  const clock = clockAt('2026-11-20T10:00:00.000Z');
  const store1 = openStore(defer, dir);
  const quota1 = DailyQuota.open(store1, LIMITS, clock.now);
  quota1.consume('usr_a', 'free');
  quota1.consume('usr_a', 'free');
  await quota1.close();
  assert.throws(() => quota1.consume('usr_a', 'free'), /closed/);
  await store1.close();

  const store2 = openStore(defer, dir);
  const quota2 = DailyQuota.open(store2, LIMITS, clock.now);
  defer(() => quota2.close());
  assert.equal(quota2.consume('usr_a', 'free').remaining, 0);
  assert.equal(quota2.consume('usr_a', 'free').allowed, false);
  // The next day starts from zero even when the process started on the day before.
  clock.set('2026-11-21T00:00:00.000Z');
  assert.equal(quota2.consume('usr_a', 'free').remaining, 2);
});

test('a change is saved without flush within the delay: a second store on the same directory sees it', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-quota-');
  const store = openStore(defer, dir);
  const clock = clockAt(new Date().toISOString());
  const quota = DailyQuota.open(store, LIMITS, clock.now, { flushDelayMs: 50 });
  defer(() => quota.close());
  quota.consume('usr_a', 'pro');
  const day = new Date(clock.now()).toISOString().slice(0, 10);
  const other = openStore(defer, dir);
  assert.equal(other.loadCounters(day).get('usr_a'), undefined, 'not saved synchronously');
  await eventually('the count saved', () => other.loadCounters(day).get('usr_a') !== undefined);
  assert.equal(other.loadCounters(day).get('usr_a'), 1);
});

test('with the default delay a change is saved within 150 ms of real time', async (t) => {
  const defer = cleanup(t);
  assert.ok(DEFAULT_FLUSH_DELAY_MS <= 100, `a crash loses at most 100 ms of counts (delay ${DEFAULT_FLUSH_DELAY_MS} ms)`);
  const dir = tempDir(defer, 'hpd-quota-');
  const store = openStore(defer, dir);
  const quota = DailyQuota.open(store, LIMITS);
  defer(() => quota.close());
  const day = new Date().toISOString().slice(0, 10);
  const other = openStore(defer, dir);
  quota.consume('usr_a', 'free');
  quota.consume('usr_a', 'free');
  await eventually('both requests counted in the store', () => other.loadCounters(day).get('usr_a') === 2, 150);
});

test('the save timer runs only while there are unsaved changes, batching a burst into one save', async (t) => {
  const defer = cleanup(t);
  const real = openStore(defer, tempDir(defer, 'hpd-quota-'));
  const saves: Array<[string, Map<string, number>]> = [];
  const store = withOverrides(real, {
    saveCounters: (day, entries) => {
      saves.push([day, new Map(entries)]);
      return real.saveCounters(day, entries);
    },
  });
  // The save timer's own clock, moved by hand: "no save" needs no waiting, and nothing depends on the machine's speed.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const quota = DailyQuota.open(store, LIMITS, clockAt('2026-11-20T10:00:00.000Z').now, { flushDelayMs: 20 });
  defer(() => quota.close());
  t.mock.timers.tick(80);
  await settle();
  assert.equal(saves.length, 0, 'no change, no save');
  quota.consume('usr_a', 'free');
  quota.consume('usr_b', 'pro');
  quota.consume('usr_a', 'free');
  t.mock.timers.tick(19);
  await settle();
  assert.equal(saves.length, 0, 'a burst waits for the delay');
  t.mock.timers.tick(1);
  await settle();
  assert.deepEqual(saves, [
    [
      '2026-11-20',
      new Map([
        ['usr_a', 2],
        ['usr_b', 1],
      ]),
    ],
  ]);
  t.mock.timers.tick(100);
  await settle();
  assert.equal(saves.length, 1, 'idle again: no periodic saves');
  quota.consume('usr_a', 'free');
  await quota.close();
  assert.deepEqual(saves[1], ['2026-11-20', new Map([['usr_a', 3]])], 'close writes what is left, only what changed');
});

test('a failed background save is reported and retried with the latest counts', async (t) => {
  const defer = cleanup(t);
  const real = openStore(defer, tempDir(defer, 'hpd-quota-'));
  let failures = 1;
  const store = withOverrides(real, {
    saveCounters: (day, entries) => (failures-- > 0 ? Promise.reject(new Error('disk full')) : real.saveCounters(day, entries)),
  });
  const errors: unknown[] = [];
  const quota = DailyQuota.open(store, LIMITS, clockAt('2026-11-20T10:00:00.000Z').now, {
    flushDelayMs: 20,
    onFlushError: (e) => errors.push(e),
  });
  defer(() => quota.close());
  quota.consume('usr_a', 'free');
  await eventually('the failure reported', () => errors.length > 0);
  assert.match(String(errors[0]), /disk full/);
  quota.consume('usr_a', 'free');
  await eventually('the retry saved the latest count', () => real.loadCounters('2026-11-20').get('usr_a') === 2);
  assert.equal(real.loadCounters('2026-11-20').get('usr_a'), 2);
  assert.equal(errors.length, 1);
});

test('daily limits (serveConfig): defaults, overrides, and errors naming the variable', () => {
  assert.deepEqual(dailyLimits({}), { free: 100, pro: 10_000, enterprise: 100_000 });
  assert.deepEqual(DEFAULT_DAILY_LIMITS, { free: 100, pro: 10_000, enterprise: 100_000 });
  assert.deepEqual(dailyLimits({ HPD_QUOTA_ENTERPRISE: '250000', HPD_QUOTA_FREE: '' }), { free: 100, pro: 10_000, enterprise: 250_000 });
  for (const bad of ['0', '-1', '1.5', '1e3', 'abc', ' 5', '0x10', '99999999999999999999']) {
    assert.throws(
      () => dailyLimits({ HPD_QUOTA_PRO: bad }),
      (err: Error) => err.message.includes('HPD_QUOTA_PRO') && err.message.includes(bad),
      bad,
    );
  }
  assert.deepEqual(TIERS, ['free', 'pro', 'enterprise']);
  assert.ok(TIER_RANK.free < TIER_RANK.pro && TIER_RANK.pro < TIER_RANK.enterprise);
  assert.deepEqual(
    TIERS.map((t) => TIER_RANK[t]),
    [0, 1, 2],
  );
});

test('rateLimitHeaders: the trio with an absolute reset, plus Retry-After only on refusal', () => {
  const base = { limit: 100, resetEpochSeconds: NEXT_MIDNIGHT_S, retryAfterSeconds: 31_234 };
  assert.deepEqual(rateLimitHeaders({ ...base, allowed: true, remaining: 42 }), [
    ['RateLimit-Limit', '100'],
    ['RateLimit-Remaining', '42'],
    ['RateLimit-Reset', '1795219200'],
  ]);
  assert.deepEqual(rateLimitHeaders({ ...base, allowed: false, remaining: 0 }), [
    ['RateLimit-Limit', '100'],
    ['RateLimit-Remaining', '0'],
    ['RateLimit-Reset', '1795219200'],
    ['Retry-After', '31234'],
  ]);
});
