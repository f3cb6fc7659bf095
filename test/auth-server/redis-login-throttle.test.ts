/**
 * The log-in throttle on Redis: LoginThrottle's figures on an injected clock, and the point of it —
 * two instances (two throttles on two connections, as two processes) share one budget, so an
 * attacker spreading guesses over instances gets the tries of one. Also: a reservation lost with its
 * instance does not block the account for good.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { ThrottledAttempt, ThrottleResult } from '../../src/auth-server/login-throttle.ts';
import { RedisLoginThrottle, RESERVATION_TTL_MS } from '../../src/auth-server/redis-login-throttle.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';
import { cleanup } from './oauth-test-client.ts';

let testRedis: TestRedis | undefined;
before(async () => {
  testRedis = await startTestRedis();
});
after(() => testRedis?.close());

let prefixes = 0;

/** `count` throttles on their own connections sharing one fresh prefix, all on `clock`. */
function throttles(t: TestContext, count: number, clock: () => number): RedisLoginThrottle[] {
  if (testRedis === undefined) throw new Error('redis-server not started');
  const defer = cleanup(t);
  const prefix = `throttle${(prefixes += 1)}:`;
  return Array.from({ length: count }, () => {
    const redis = new Redis(testRedis!.url);
    defer(() => redis.quit());
    return new RedisLoginThrottle(redis, { prefix, clock, onError: (err) => assert.fail(String(err)) });
  });
}

function granted(r: ThrottleResult): ThrottledAttempt {
  if (!r.allowed) throw new Error(`refused, retry after ${r.retryAfterSeconds} s`);
  return r.attempt;
}

test('redis throttle: 5 free failures, then 2^(n-5) s capped at 5 min; forgotten after an hour; a success clears the account', async (t) => {
  let now = 1_000_000;
  const [throttle] = throttles(t, 1, () => now);
  // Each from its own address so that only the account table decides.
  let address = 0;
  const fail = async (): Promise<void> => {
    granted(await throttle.login('a@example.org', `10.1.${(address += 1) % 250}.1`)).failed();
    await throttle.settled();
  };
  for (let i = 0; i < 5; i += 1) await fail();
  assert.deepEqual(await throttle.login('a@example.org', '10.2.0.1'), { allowed: false, retryAfterSeconds: 1 });
  const waits: number[] = [];
  for (let n = 5; n < 16; n += 1) {
    const decision = await throttle.login('a@example.org', '10.2.0.1');
    assert.equal(decision.allowed, false);
    const wait = decision.allowed ? 0 : decision.retryAfterSeconds;
    waits.push(wait);
    now += wait * 1000 - 1;
    assert.equal((await throttle.login('a@example.org', '10.2.0.1')).allowed, false, 'not a millisecond early');
    now += 1;
    await fail();
  }
  assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
  assert.equal((await throttle.login('b@example.org', '10.2.0.1')).allowed, true, 'another account is not affected');

  now += 60 * 60 * 1000;
  for (let i = 0; i < 5; i += 1) await fail();
  assert.equal((await throttle.login('a@example.org', '10.2.0.1')).allowed, false, 'counting again after an hour');
  now += 60 * 60 * 1000;
  await fail();
  granted(await throttle.login('a@example.org', '10.3.0.1')).succeeded();
  await throttle.settled();
  for (let i = 0; i < 4; i += 1) await fail();
  assert.equal(
    (await throttle.login('a@example.org', '10.2.0.1')).allowed,
    true,
    'the success cleared the earlier failure: 4 since are still free',
  );
});

test('redis throttle, two instances: 300 simultaneous reservations spread over both grant 5; failures on one block the other', async (t) => {
  let now = 0;
  const [a, b] = throttles(t, 2, () => now);
  const results = await Promise.all(
    Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).login('victim@example.org', `10.0.${i % 250}.1`)),
  );
  const attempts = results.filter((r) => r.allowed).map(granted);
  assert.equal(attempts.length, 5);
  for (const attempt of attempts) attempt.failed();
  await Promise.all([a.settled(), b.settled()]);
  assert.deepEqual(await b.login('victim@example.org', '10.9.9.9'), { allowed: false, retryAfterSeconds: 1 });
  now += 1000;
  // Back-off reached: one attempt at a time, across instances.
  const one = granted(await a.login('victim@example.org', '10.9.9.9'));
  assert.equal((await b.login('victim@example.org', '10.9.9.8')).allowed, false);
  one.failed();
  await a.settled();
  assert.deepEqual(await b.login('victim@example.org', '10.9.9.9'), { allowed: false, retryAfterSeconds: 2 }, 'doubled for both');
});

test('redis throttle: per address 10 failures across accounts, a success does not clear it; sign-ups 10 per address', async (t) => {
  let now = 0;
  const [a, b] = throttles(t, 2, () => now);
  for (let i = 0; i < 10; i += 1) {
    granted(await (i % 2 === 0 ? a : b).login(`user${i}@example.org`, '192.0.2.7')).failed();
    await Promise.all([a.settled(), b.settled()]);
  }
  assert.equal((await a.login('someone@example.org', '192.0.2.7')).allowed, false);
  assert.equal((await a.login('someone@example.org', '::ffff:192.0.2.8')).allowed, true, 'another address is free');
  now += 1000;
  granted(await b.login('own@example.org', '192.0.2.7')).succeeded();
  await b.settled();
  // The address keeps its count: its next failure doubles the wait instead of starting afresh.
  granted(await a.login('other@example.org', '192.0.2.7')).failed();
  await a.settled();
  assert.deepEqual(await b.login('third@example.org', '192.0.2.7'), { allowed: false, retryAfterSeconds: 2 });

  for (let i = 0; i < 10; i += 1) {
    granted(await (i % 2 === 0 ? a : b).signup('2001:db8:1:2::5')).failed();
    await Promise.all([a.settled(), b.settled()]);
  }
  assert.equal((await b.signup('2001:db8:1:2:ffff::9')).allowed, false, 'same /64');
  assert.equal((await b.signup('2001:db8:1:3::5')).allowed, true);
});

test('redis throttle: a reservation never settled (its instance died) stops counting after RESERVATION_TTL_MS', async (t) => {
  let now = 0;
  const [a, b] = throttles(t, 2, () => now);
  for (let i = 0; i < 5; i += 1) granted(await a.login('lost@example.org', `10.0.0.${i}`));
  assert.equal((await b.login('lost@example.org', '10.0.1.1')).allowed, false, 'five in flight');
  now += RESERVATION_TTL_MS - 1;
  assert.equal((await b.login('lost@example.org', '10.0.1.1')).allowed, false);
  now += 1;
  assert.equal((await b.login('lost@example.org', '10.0.1.1')).allowed, true);
});
