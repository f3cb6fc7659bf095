/**
 * The state store on a real redis-server: what one instance writes reaches another instance's replica
 * at once (pub/sub) or within the periodic check; updates are compare-and-set, so a last-use touch
 * never undoes a revocation; while Redis is unreachable, known keys keep working for the grace time and
 * unknown ones are 'degraded' (503 upstream), then 'unavailable'; back up, the replica catches up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKey, hashKey, purgeRevokedKeys, revokeKey } from '../../src/policy/api-keys.ts';
import { authenticate } from '../../src/policy/authenticate.ts';
import { connectRedis, type RedisLink } from '../../src/policy/redis-link.ts';
import { openRedisStateStore } from '../../src/policy/redis-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';
import { eventually } from '../helpers/eventually.ts';

async function twoStores(
  redis: TestRedis,
  graceMs?: number,
): Promise<{ a: StateStore; b: StateStore; links: RedisLink[]; close(): Promise<void> }> {
  const links = [await connectRedis(redis.url, { log: () => {} }), await connectRedis(redis.url, { log: () => {} })];
  const a = await openRedisStateStore(links[0]!, { graceMs });
  const b = await openRedisStateStore(links[1]!, { graceMs });
  return {
    a,
    b,
    links,
    async close() {
      await a.close();
      await b.close();
      for (const l of links) await l.close();
    },
  };
}

test('a key created and revoked through one instance is seen by the other at once; hashes only in Redis', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis();
  t.after(() => redis.close());
  const s = await twoStores(redis);
  t.after(() => s.close());

  const created = await createKey(s.a, { tier: 'free', now: Date.now(), label: 'cluster' });
  const header = `Bearer ${created.plaintext}`;
  const seenIn = await eventually('key visible in b', () => s.b.getKeyByHash(hashKey(created.plaintext)) !== undefined);
  assert.ok(seenIn < 1000, `visible after ${seenIn} ms`);
  assert.equal(authenticate(header, s.b, Date.now()).ok, true);
  // Nothing in Redis holds the plaintext.
  const dump =
    JSON.stringify(await s.links[0]!.client.hgetall('hpd:keys')) + JSON.stringify(await s.links[0]!.client.hgetall('hpd:keys-by-hash'));
  assert.ok(!dump.includes(created.plaintext) && dump.includes(hashKey(created.plaintext)));

  const genBefore = s.a.generation();
  await revokeKey(s.b, created.record.id, Date.now());
  const revokedIn = await eventually('revocation visible in a', () => authenticate(header, s.a, Date.now()).ok === false);
  assert.ok(revokedIn < 1000, `revoked after ${revokedIn} ms`);
  assert.ok(s.a.generation() > genBefore);
});

test('purging revoked keys through one instance deletes them and their hash entries everywhere; keys in use stay', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis();
  t.after(() => redis.close());
  const s = await twoStores(redis);
  t.after(() => s.close());

  const t0 = Date.parse('2026-03-01T00:00:00Z');
  const old = await createKey(s.a, { tier: 'free', now: t0 });
  const recent = await createKey(s.a, { tier: 'free', now: t0 });
  const live = await createKey(s.a, { tier: 'free', now: t0 });
  await revokeKey(s.a, old.record.id, t0 + 1000);
  await revokeKey(s.a, recent.record.id, t0 + 10 * 86_400_000);
  await eventually('b has all three', () => s.b.listKeys().length === 3);

  const gone = await purgeRevokedKeys(s.b, t0 + 86_400_000);
  assert.deepEqual(
    gone.map((k) => k.id),
    [old.record.id],
  );
  await eventually('the purge reaches a', () => s.a.getKey(old.record.id) === undefined);
  assert.equal(s.a.getKeyByHash(hashKey(old.plaintext)), undefined);
  assert.equal(await s.links[0]!.client.hexists('hpd:keys-by-hash', hashKey(old.plaintext)), 0);
  assert.equal(await s.links[0]!.client.hexists('hpd:keys', old.record.id), 0);
  assert.deepEqual(
    s.a
      .listKeys()
      .map((k) => k.id)
      .sort(),
    [live.record.id, recent.record.id].sort(),
  );
  assert.equal(authenticate(`Bearer ${live.plaintext}`, s.a, Date.now()).ok, true);
  assert.equal(authenticate(`Bearer ${old.plaintext}`, s.a, Date.now()).ok, false);
});

test('updates are compare-and-set: a last-use touch racing a revocation never undoes it', { timeout: 60_000 }, async (t) => {
  const redis = await startTestRedis();
  t.after(() => redis.close());
  const s = await twoStores(redis);
  t.after(() => s.close());
  for (let round = 0; round < 20; round++) {
    const created = await createKey(s.a, { tier: 'free', now: Date.now() });
    const id = created.record.id;
    await Promise.all([
      s.a.updateKey(id, (c) => ({ ...c, last_used_at: new Date(Date.now() + round).toISOString() })),
      s.b.updateKey(id, (c) => (c.revoked_at === null ? { ...c, revoked_at: new Date().toISOString() } : undefined)),
      s.a.updateKey(id, (c) => ({ ...c, label: `touched ${round}` })),
    ]);
    const stored = JSON.parse((await s.links[0]!.client.hget('hpd:keys', id))!) as { revoked_at: string | null; label: string };
    assert.notEqual(stored.revoked_at, null, `round ${round}: revocation lost`);
    assert.equal(stored.label, `touched ${round}`);
  }
});

test('Redis unreachable: known keys served within the grace, unknown ones degraded, then unavailable; back: caught up', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis();
  t.after(() => redis.close());
  const s = await twoStores(redis, 1500);
  t.after(() => s.close());
  const known = await createKey(s.a, { tier: 'pro', now: Date.now() });
  await eventually('known in b', () => s.b.getKeyByHash(hashKey(known.plaintext)) !== undefined);
  assert.equal(s.b.health(), 'ok');

  await redis.stop();
  await eventually('b degraded', () => s.b.health() === 'degraded');
  assert.equal(authenticate(`Bearer ${known.plaintext}`, s.b, Date.now()).ok, true, 'known key still served');
  const unknown = authenticate(`Bearer hpd_${'a'.repeat(40)}`, s.b, Date.now());
  assert.deepEqual(unknown, { ok: false, reason: 'unavailable' });
  await eventually('b unavailable after the grace', () => s.b.health() === 'unavailable', 4000);
  assert.deepEqual(authenticate(`Bearer ${known.plaintext}`, s.b, Date.now()), { ok: false, reason: 'unavailable' });

  await redis.start();
  await eventually('b ok again', () => s.b.health() === 'ok', 5000);
  await eventually('a ok again', () => s.a.health() === 'ok', 5000);
  const later = await createKey(s.a, { tier: 'free', now: Date.now() });
  await eventually('a key created after the outage reaches b', () => s.b.getKeyByHash(hashKey(later.plaintext)) !== undefined);
  assert.equal(authenticate(`Bearer ${known.plaintext}`, s.b, Date.now()).ok, true);
});
