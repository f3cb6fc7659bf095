/**
 * The epoch of the Redis dataset (src/policy/redis-epoch.ts) on a real redis-server: no process creates
 * or switches one by itself; `hpd redis init` (initRedisEpoch) and `hpd redis adopt` (adoptRedisEpoch)
 * are the only ways, and instances, running or starting, follow what those stamped since they joined.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { createKey } from '../../src/policy/api-keys.ts';
import { authenticate } from '../../src/policy/authenticate.ts';
import { adoptRedisEpoch, initRedisEpoch, readEpochRecord, readRedisEpoch, REDIS_EPOCH_FILE } from '../../src/policy/redis-epoch.ts';
import { connectRedis } from '../../src/policy/redis-link.ts';
import { CHECK_MS, openRedisStateStore } from '../../src/policy/redis-store.ts';
import { StateError } from '../../src/policy/state-error.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';

const until = async (what: string, ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, CHECK_MS / 5));
  assert.ok(ok(), what);
};

/** A store as `hpd serve`'s main thread opens it (recording the epoch), closed after the test. */
async function open(t: TestContext, redis: TestRedis, epochFile: string, recordEpoch = true): Promise<StateStore> {
  const link = await connectRedis(redis.url, { log: () => {} });
  try {
    const store = await openRedisStateStore(link, { epochFile, recordEpoch, log: () => {} });
    t.after(async () => {
      await store.close();
      await link.close();
    });
    return store;
  } catch (err) {
    await link.close();
    throw err;
  }
}

async function setup(t: TestContext, opts: { epoch?: boolean } = {}): Promise<{ redis: TestRedis; raw: Redis; dir: string }> {
  const redis = await startTestRedis({ persistent: false, ...opts });
  t.after(() => redis.close());
  const raw = new Redis(redis.url);
  t.after(() => raw.disconnect());
  const dir = mkdtempSync(join(tmpdir(), 'hpd-redis-epoch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { redis, raw, dir };
}

const refusal = (pattern: RegExp) => (err: unknown) => err instanceof StateError && pattern.test(err.message);

test('a Redis without an epoch is refused with nothing written; init creates one once and keeps data from before epochs', {
  timeout: 60_000,
}, async (t) => {
  const { redis, raw, dir } = await setup(t, { epoch: false });
  const epochFile = join(dir, REDIS_EPOCH_FILE);
  await assert.rejects(open(t, redis, epochFile), refusal(/has no hpd epoch.*run hpd redis init/));
  assert.equal(await raw.dbsize(), 0, 'nothing written to Redis');
  assert.equal(existsSync(epochFile), false, 'no record written');

  // hpd data from before epochs: kept by init.
  const user = { id: 'legacy-user', tier: 'pro', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
  await raw.hset('hpd:users', user.id, JSON.stringify(user));
  await assert.rejects(open(t, redis, epochFile), refusal(/has no hpd epoch/));
  const first = await initRedisEpoch(raw);
  assert.equal(first.created, true);
  assert.ok(first.epoch.stamp > 0);
  const again = await initRedisEpoch(raw);
  assert.deepEqual(again, { created: false, epoch: first.epoch }, 'init never replaces an epoch');
  const store = await open(t, redis, epochFile);
  assert.equal(store.getUser(user.id)?.tier, 'pro');
  assert.deepEqual(readEpochRecord(epochFile), first.epoch);
});

test('a record of the epoch alone keeps working; a record of another epoch is refused unless an operator stamped Redis since', {
  timeout: 60_000,
}, async (t) => {
  const { redis, raw, dir } = await setup(t);
  const current = (await readRedisEpoch(raw))!;
  const epochFile = join(dir, REDIS_EPOCH_FILE);
  writeFileSync(epochFile, `${current.epoch}\n`);
  await open(t, redis, epochFile);
  assert.deepEqual(readEpochRecord(epochFile), current, 'the legacy record gains the stamp');

  const foreign = `0123456789abcdef ${current.stamp + 1}\n`;
  writeFileSync(epochFile, foreign);
  await assert.rejects(open(t, redis, epochFile), refusal(/not the dataset this instance served.*hpd redis adopt/));
  assert.equal(readFileSync(epochFile, 'utf8'), foreign, 'a refused start leaves the record as it was');
  // A CLI command (no recording) with the same record is refused too, and never writes it.
  await assert.rejects(open(t, redis, epochFile, false), refusal(/hpd redis adopt/));

  const adopted = (await adoptRedisEpoch(raw))!;
  assert.equal(adopted.epoch, current.epoch);
  assert.ok(adopted.stamp > current.stamp);
  await open(t, redis, epochFile, false);
  assert.equal(readFileSync(epochFile, 'utf8'), foreign, 'only hpd serve writes the record');
  await open(t, redis, epochFile);
  assert.deepEqual(readEpochRecord(epochFile), adopted);
});

test('a running instance goes lost on an emptied or older dataset, and follows hpd redis init and adopt at once', {
  timeout: 60_000,
}, async (t) => {
  const { redis, raw, dir } = await setup(t);
  const epochFile = join(dir, REDIS_EPOCH_FILE);
  const store = await open(t, redis, epochFile);
  const first = (await readRedisEpoch(raw))!;
  const k1 = `Bearer ${(await createKey(store, { tier: 'pro', now: Date.now() })).plaintext}`;
  const names = await raw.keys('hpd:*');
  const backup = await Promise.all(names.map(async (k) => [k, await raw.dumpBuffer(k)] as const));
  const ok = (h: string): boolean => authenticate(h, store, Date.now()).ok;
  const reason = (h: string): string | undefined => {
    const r = authenticate(h, store, Date.now());
    return r.ok ? undefined : r.reason;
  };

  await raw.flushall();
  await until('the emptied Redis was noticed', () => store.health() === 'lost');
  assert.equal(ok(k1), true, 'a known key is served from the replica');
  assert.equal(await readRedisEpoch(raw), null, 'a running instance never creates an epoch');

  // Starting over: the operator's init, followed by the running instance.
  const second = (await initRedisEpoch(raw)).epoch;
  await until('the running instance adopted the new epoch', () => store.health() === 'ok');
  assert.equal(reason(k1), 'invalid', 'started over: the old keys are gone');
  assert.deepEqual(readEpochRecord(epochFile), second);
  const k2 = `Bearer ${(await createKey(store, { tier: 'pro', now: Date.now() })).plaintext}`;
  assert.equal(ok(k2), true);

  // An older backup restored: another dataset, stamped before the one this instance joined.
  await raw.flushall();
  for (const [k, v] of backup) if (v !== null) await raw.restore(k, 0, v, 'REPLACE');
  assert.deepEqual(await readRedisEpoch(raw), first);
  await until('the older dataset was refused', () => store.health() === 'lost');
  assert.equal(ok(k2), true, 'the replica is kept');
  assert.equal(reason(k1), 'unavailable');
  assert.deepEqual(readEpochRecord(epochFile), second, 'the record is kept');
  await assert.rejects(open(t, redis, epochFile), refusal(/hpd redis adopt/));

  const adopted = (await adoptRedisEpoch(raw))!;
  await until('the running instance adopted the restored dataset', () => store.health() === 'ok');
  assert.equal(ok(k1), true);
  assert.equal(reason(k2), 'invalid');
  assert.deepEqual(readEpochRecord(epochFile), adopted);
  await open(t, redis, epochFile);
});
