/**
 * An emptied Redis is not taken at its word: `FLUSHALL` (or a restart without persistence) removes the
 * dataset's epoch, so the replica is kept: known keys still authenticate, unknown ones get 503, the
 * store reports 'lost' (readiness stays 200 with that status, so a balancer keeps the instance); a
 * process starting against that Redis refuses with one line; and when Redis is restored from its backup
 * (the same epoch and data), everything is as before. A real Redis, flushed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { readinessOf, readyzAnswer } from '../../src/observability/health-probes.ts';
import type { DataRegistry } from '../../src/operations/data-registry.ts';
import { createKey, KEY_PATTERN } from '../../src/policy/api-keys.ts';
import { authenticate } from '../../src/policy/authenticate.ts';
import { connectRedis } from '../../src/policy/redis-link.ts';
import { CHECK_MS, openRedisStateStore, REDIS_EPOCH_FILE } from '../../src/policy/redis-store.ts';
import { StateError } from '../../src/policy/state-error.ts';
import { startTestRedis } from '../helpers/redis-server.ts';

const until = async (what: string, ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, CHECK_MS / 5));
  assert.ok(ok(), what);
};

test('a flushed Redis: known keys keep working, readiness reports lost, a new process refuses, a restore brings it all back', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis({ persistent: false });
  t.after(() => redis.close());
  const dir = mkdtempSync(join(tmpdir(), 'hpd-redis-lost-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const epochFile = join(dir, REDIS_EPOCH_FILE);
  const lines: string[] = [];
  const link = await connectRedis(redis.url, { log: (l) => lines.push(l) });
  const store = await openRedisStateStore(link, { epochFile, recordEpoch: true });
  t.after(async () => {
    await store.close();
    await link.close();
  });
  const other = new Redis(redis.url);
  t.after(() => other.disconnect());

  const { plaintext } = await createKey(store, { tier: 'pro', now: Date.now() });
  const header = `Bearer ${plaintext}`;
  const unknown = `Bearer hpd_${'0'.repeat(40)}`;
  assert.ok(KEY_PATTERN.test(plaintext));
  assert.equal(authenticate(header, store, Date.now()).ok, true);
  // What a backup holds (AOF/RDB stand-in): every hpd key, dumped before the loss.
  const names = await other.keys('hpd:*');
  const dumps = await Promise.all(names.map(async (k) => [k, await other.dumpBuffer(k)] as const));

  await other.flushall();
  await until('the emptied Redis was noticed', () => store.health() === 'lost');
  assert.equal(authenticate(header, store, Date.now()).ok, true, 'a known key keeps working from the replica');
  const refused = authenticate(unknown, store, Date.now());
  assert.ok(!refused.ok && refused.reason === 'unavailable', 'an unknown key is 503, not 401: it may exist in the lost data');
  assert.equal(readinessOf(false, store), 'lost');
  const lost = readyzAnswer('lost', { years: [], version: '', builds: {} } as unknown as DataRegistry);
  assert.equal(lost.status, 200, 'known keys are still served: the instance stays in the balancer');
  assert.equal(JSON.parse(lost.body).status, 'lost');
  assert.ok(
    lines.some((l) => /has lost hpd's data/.test(l)),
    lines.join('\n'),
  );

  // Another process (a restart, a CLI command) with this state directory refuses the emptied Redis.
  const fresh = await connectRedis(redis.url, { log: () => {} });
  t.after(() => fresh.close());
  await assert.rejects(
    openRedisStateStore(fresh, { epochFile }),
    (err: unknown) => err instanceof StateError && /has no hpd epoch.*run hpd redis init/.test(err.message),
  );

  // The operator restores Redis from its backup: the same epoch and data, and the link is up again.
  for (const [k, v] of dumps) if (v !== null) await other.restore(k, 0, v, 'REPLACE');
  await until('the restored data was recognised', () => store.health() === 'ok');
  assert.equal(authenticate(header, store, Date.now()).ok, true);
  assert.equal(authenticate(unknown, store, Date.now()).ok, false);
  assert.ok(
    lines.some((l) => /reachable again/.test(l)),
    lines.join('\n'),
  );
});
