/**
 * Authorization header → user and tier (docs/compatibility.md#authentication): the missing/invalid split, no store lookup for
 * malformed values, revocation and tier changes taking effect on the next call, and the rate-limited
 * last_used_at write that must never undo a revocation.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKey, revokeKey, setUserTier } from '../../src/policy/api-keys.ts';
import { authenticate, bearerToken, classifyBearer, LAST_USED_RESOLUTION_MS } from '../../src/policy/authenticate.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';

const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl';

interface Spied {
  store: StateStore;
  /** Calls per method name since the last reset. */
  calls: Map<string, number>;
  /** Resolves once every write started so far has settled, including authenticate's bookkeeping. */
  idle(): Promise<void>;
}

/** A real LMDB store wrapped so the test can count which methods authenticate calls. */
function setup(t: TestContext): Spied {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-auth-'));
  const real = openLmdbStateStore(dir);
  t.after(async () => {
    await real.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const calls = new Map<string, number>();
  const pending: Array<Promise<unknown>> = [];
  const store = new Proxy(real, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        const result: unknown = Reflect.apply(value, target, args);
        if (result instanceof Promise) pending.push(result);
        return result;
      };
    },
  });
  const idle = async (): Promise<void> => {
    // A write becomes visible to readers at commit but resolves only after the disk sync; wait for
    // the promise, then one macrotask so authenticate's .finally bookkeeping has run too.
    await Promise.allSettled(pending);
    await sleep(1);
  };
  return { store, calls, idle };
}

test('no header or another scheme → missing', (t) => {
  const { store, calls } = setup(t);
  for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', `Token hpd_${'0'.repeat(40)}`, `Bearerhpd_${'0'.repeat(40)}`, 'Bear']) {
    assert.deepEqual(authenticate(header, store, NOW), { ok: false, reason: 'missing' }, String(header));
  }
  assert.equal(calls.size, 0);
});

test('malformed Bearer values → invalid without any store lookup', (t) => {
  const { store, calls } = setup(t);
  const malformed = [
    'Bearer op_your_api_key_here_1234567890abcdefgh',
    'Bearer',
    'Bearer ',
    `Bearer  hpd_${'0'.repeat(40)}`,
    `Bearer hpd_${'0'.repeat(40)} `,
    `Bearer hpd_${'A'.repeat(40)}`,
    `Bearer hpd_${'0'.repeat(39)}`,
  ];
  for (const header of malformed) assert.deepEqual(authenticate(header, store, NOW), { ok: false, reason: 'invalid' }, header);
  assert.equal(calls.size, 0, `unexpected store calls: ${[...calls.keys()].join(', ')}`);
});

test('a JWT is refused as invalid without a lookup (REST takes API keys only)', (t) => {
  const { store, calls } = setup(t);
  assert.equal(classifyBearer(JWT), 'jwt');
  assert.deepEqual(authenticate(`Bearer ${JWT}`, store, NOW), { ok: false, reason: 'invalid' });
  assert.equal(calls.size, 0);
});

test('a valid key authenticates with any capitalisation of the scheme', async (t) => {
  const { store } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'pro', userId: 'usr_1', now: NOW });
  const expected = { ok: true, userId: 'usr_1', tier: 'pro', keyId: record.id };
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR'])
    assert.deepEqual(authenticate(`${scheme} ${plaintext}`, store, NOW), expected);
  assert.equal(bearerToken(`bearer ${plaintext}`), plaintext);
  assert.equal(classifyBearer(plaintext), 'api_key');
});

test('a well-formed unknown key → invalid, after one lookup', (t) => {
  const { store, calls } = setup(t);
  assert.deepEqual(authenticate(`Bearer hpd_${'0'.repeat(40)}`, store, NOW), { ok: false, reason: 'invalid' });
  assert.equal(calls.get('getKeyByHash'), 1);
});

test('a revoked key → invalid on the next call', async (t) => {
  const { store } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'free', now: NOW });
  assert.equal(authenticate(`Bearer ${plaintext}`, store, NOW).ok, true);
  await revokeKey(store, record.id, NOW);
  assert.deepEqual(authenticate(`Bearer ${plaintext}`, store, NOW), { ok: false, reason: 'invalid' });
});

test('the tier is the owner’s current tier, following set-tier immediately', async (t) => {
  const { store } = setup(t);
  const { plaintext } = await createKey(store, { tier: 'free', userId: 'usr_1', now: NOW });
  const tierNow = (): unknown => {
    const r = authenticate(`Bearer ${plaintext}`, store, NOW);
    return r.ok ? r.tier : r.reason;
  };
  assert.equal(tierNow(), 'free');
  await setUserTier(store, 'usr_1', 'enterprise', NOW);
  assert.equal(tierNow(), 'enterprise');
  await setUserTier(store, 'usr_1', 'free', NOW);
  assert.equal(tierNow(), 'free', 'a downgrade keeps the key working at the lower tier');
});

test('a key whose user record is missing → invalid (fail closed)', async (t) => {
  const { store } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'pro', now: NOW });
  await store.putKey({ ...record, user_id: 'usr_gone' });
  assert.deepEqual(authenticate(`Bearer ${plaintext}`, store, NOW), { ok: false, reason: 'invalid' });
});

test('last_used_at is written in the background, at most once per minute per key', async (t) => {
  const { store, calls, idle } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'pro', now: NOW });
  const header = `Bearer ${plaintext}`;

  assert.equal(authenticate(header, store, NOW).ok, true);
  assert.equal(store.getKey(record.id)?.last_used_at, null, 'not written synchronously');
  await idle();
  assert.equal(store.getKey(record.id)?.last_used_at, '2026-11-20T12:00:00.000Z');

  calls.clear();
  for (const dt of [1, 30_000, LAST_USED_RESOLUTION_MS - 1]) authenticate(header, store, NOW + dt);
  assert.equal(calls.get('updateKey'), undefined, 'no write within the minute');

  authenticate(header, store, NOW + LAST_USED_RESOLUTION_MS);
  // A burst while that write is in flight queues no further writes.
  for (let i = 0; i < 50; i++) authenticate(header, store, NOW + LAST_USED_RESOLUTION_MS + 1);
  assert.equal(calls.get('updateKey'), 1);
  await idle();
  assert.equal(store.getKey(record.id)?.last_used_at, '2026-11-20T12:01:00.000Z');
});

test('the last_used_at write never undoes a revocation committed after the key was read', async (t) => {
  const { store, idle } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'pro', now: NOW });
  await revokeKey(store, record.id, NOW);
  // The request read the key just before the revocation committed (e.g. by the CLI in another process).
  const stale: StateStore = Object.create(store, { getKeyByHash: { value: () => ({ ...record }) } });
  assert.equal(authenticate(`Bearer ${plaintext}`, stale, NOW + 1).ok, true);
  await idle();
  const stored = store.getKey(record.id);
  assert.equal(stored?.last_used_at, '2026-11-20T12:00:00.001Z');
  assert.equal(stored?.revoked_at, '2026-11-20T12:00:00.000Z');
});
