/**
 * A Redis that stalls is treated like an unreachable one within one command timeout. A
 * real Redis is stalled with `DEBUG SLEEP` from another connection; its connection stays open, so
 * ioredis keeps calling it ready. Before, a Free request (which leases exactly what it needs) waited for
 * the whole stall, one 1 s timeout after another, and the link never went down, so the outage rules
 * never applied. Now the first timeout marks the link down: the waiting request is counted locally (the
 * outage rules), later ones are decided without waiting at all, and a PING brings the link back when
 * Redis answers, adding what was counted meanwhile. The test judges order, not time: the request must be
 * answered before Redis wakes up.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { LeasedQuota } from '../../src/policy/leased-quota.ts';
import { connectRedis } from '../../src/policy/redis-link.ts';
import { quotaKey } from '../../src/policy/redis-store.ts';
import { startTestRedis } from '../helpers/redis-server.ts';

const LIMITS = { free: 100, pro: 10_000, enterprise: 100_000 } as const;
const STALL_S = 4;

test('a stalled Redis: the request waiting on it is answered before Redis wakes, the next ones at once, and counts are added after', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis({ persistent: false });
  t.after(() => redis.close());
  const lines: string[] = [];
  const link = await connectRedis(redis.url, { log: (l) => lines.push(l) });
  const quota = new LeasedQuota(link, LIMITS);
  t.after(async () => {
    await quota.close();
    await link.close();
  });
  const other = new Redis(redis.url);
  t.after(() => other.disconnect());
  assert.equal((await quota.consume('usr_before', 'free')).allowed, true, 'Redis answers before the stall');

  const woke = other.call('DEBUG', 'SLEEP', String(STALL_S)).then(() => 'redis woke up' as const);
  await new Promise((resolve) => setTimeout(resolve, 100)); // the SLEEP has reached Redis
  const waiting = Promise.resolve(quota.consume('usr_during', 'free'));
  const first = await Promise.race([waiting.then(() => 'answered' as const), woke]);
  assert.equal(first, 'answered', 'the request was answered only when Redis woke up: it waited for the whole stall');
  assert.equal((await waiting).allowed, true, 'counted locally under the outage rules');
  assert.equal(link.up(), false, 'the stalled link counts as down');
  assert.ok(
    lines.some((l) => /unreachable .*no answer within 1000 ms/.test(l)),
    lines.join('\n'),
  );

  // Decided without Redis while it sleeps: no promise to wait on.
  const next = quota.consume('usr_during', 'free');
  assert.ok(!(next instanceof Promise), 'a request during the stall waited on Redis');
  assert.equal(next.allowed, true);

  await woke;
  for (let i = 0; i < 100 && !link.up(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(link.up(), true, 'a PING brought the link back');
  assert.ok(
    lines.some((l) => /reachable again/.test(l)),
    lines.join('\n'),
  );
  // The two requests counted during the stall are added to the shared counter. The lease that timed
  // out was still queued in Redis and runs when it wakes: one unit more is counted, never used (the
  // error is on the side of the limit, as for a thread killed with units in hand).
  let counted = 0;
  for (let i = 0; i < 100 && counted < 2; i++) {
    counted = Number(await other.hget(quotaKey(new Date().toISOString().slice(0, 10)), 'usr_during'));
    if (counted < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(counted === 2 || counted === 3, `counted ${counted} for 2 requests`);
});
