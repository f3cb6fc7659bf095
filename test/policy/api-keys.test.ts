/**
 * Minting, hashing, revoking and listing API keys, the user/tier rules of createKey, and the promise
 * that only hashes are stored: the plaintext is searched for in the raw bytes of the LMDB file.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey, generateKey, hashKey, KEY_PATTERN, listKeys, listUsers, revokeKey, setUserTier } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore, STATE_FILE } from '../../src/policy/lmdb-store.ts';
import { KEY_ID_PATTERN, type StateStore } from '../../src/policy/state-store.ts';

const NOW = Date.parse('2026-11-20T12:00:00.000Z');

function setup(t: TestContext): { dir: string; store: StateStore } {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-keys-'));
  const store = openLmdbStateStore(dir);
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store };
}

test('generateKey: hpd_ + 40 lower-case hex, fresh every time, hash = SHA-256 of the whole key', () => {
  const a = generateKey();
  const b = generateKey();
  assert.match(a.plaintext, KEY_PATTERN);
  assert.notEqual(a.plaintext, b.plaintext);
  assert.equal(a.hash, createHash('sha256').update(a.plaintext).digest('hex'));
  assert.equal(hashKey(`hpd_${'0'.repeat(40)}`), 'f21ae5049d06140336cca792af8e7b4150d00fe488d5e260b88870446ecf6299');
});

test('KEY_PATTERN rejects look-alikes', () => {
  for (const bad of [
    'op_your_api_key_here_1234567890abcdefgh',
    `hpd_${'A'.repeat(40)}`,
    `hpd_${'0'.repeat(39)}`,
    `hpd_${'0'.repeat(41)}`,
    ` hpd_${'0'.repeat(40)}`,
  ]) {
    assert.doesNotMatch(bad, KEY_PATTERN, bad);
  }
});

test('createKey without a user creates one with the tier and stores only the hash', async (t) => {
  const { store } = setup(t);
  const created = await createKey(store, { tier: 'pro', label: 'ci', now: NOW });
  assert.match(created.plaintext, KEY_PATTERN);
  assert.match(created.record.id, KEY_ID_PATTERN);
  assert.match(created.record.user_id, /^usr_[0-9a-f]{16}$/);
  assert.equal(created.userChange, 'created');
  assert.deepEqual(created.record, {
    id: created.record.id,
    hash: hashKey(created.plaintext),
    user_id: created.record.user_id,
    label: 'ci',
    tier_at_creation: 'pro',
    created_at: '2026-11-20T12:00:00.000Z',
    last_used_at: null,
    revoked_at: null,
  });
  assert.deepEqual(store.getUser(created.record.user_id), {
    id: created.record.user_id,
    tier: 'pro',
    created_at: '2026-11-20T12:00:00.000Z',
    updated_at: '2026-11-20T12:00:00.000Z',
  });
  assert.deepEqual(store.getKeyByHash(hashKey(created.plaintext)), created.record);
  assert.ok(!JSON.stringify(created.record).includes(created.plaintext.slice(4)));
});

test('the plaintext key appears nowhere in the LMDB file, the hash does', async (t) => {
  const { dir, store } = setup(t);
  const { plaintext, record } = await createKey(store, { tier: 'free', label: 'secret-check', now: NOW });
  await revokeKey(store, record.id, NOW + 1000); // a second write of the record
  const bytes = readFileSync(join(dir, STATE_FILE));
  assert.ok(bytes.includes(Buffer.from(record.hash, 'latin1')), 'sanity: the search does find stored strings');
  assert.equal(bytes.includes(Buffer.from(plaintext, 'latin1')), false);
  assert.equal(bytes.includes(Buffer.from(plaintext.slice(4), 'latin1')), false, 'not even the hex part');
  assert.equal(bytes.includes(Buffer.from(plaintext.slice(4), 'hex')), false, 'nor its raw bytes');
});

test('createKey for a missing named user creates it; for an existing user it sets the tier', async (t) => {
  const { store } = setup(t);
  const first = await createKey(store, { tier: 'free', userId: 'acct-42', now: NOW });
  assert.equal(first.userChange, 'created');
  assert.equal(store.getUser('acct-42')?.tier, 'free');

  const same = await createKey(store, { tier: 'free', userId: 'acct-42', now: NOW + 1 });
  assert.equal(same.userChange, 'unchanged');
  assert.equal(store.getUser('acct-42')?.updated_at, '2026-11-20T12:00:00.000Z');

  const upgraded = await createKey(store, { tier: 'enterprise', userId: 'acct-42', now: NOW + 2 });
  assert.equal(upgraded.userChange, 'tier-changed');
  assert.equal(upgraded.previousTier, 'free');
  const user = store.getUser('acct-42');
  assert.equal(user?.tier, 'enterprise');
  assert.equal(user?.created_at, '2026-11-20T12:00:00.000Z');
  assert.equal(user?.updated_at, '2026-11-20T12:00:00.002Z');
  // Older keys keep their own record of the tier they were created under.
  assert.equal(store.getKey(first.record.id)?.tier_at_creation, 'free');
});

test('createKey rejects bad user ids and labels before writing anything', async (t) => {
  const { store } = setup(t);
  await assert.rejects(createKey(store, { tier: 'free', userId: '-rf', now: NOW }), /invalid user id/);
  await assert.rejects(createKey(store, { tier: 'free', userId: 'a b', now: NOW }), /invalid user id/);
  await assert.rejects(createKey(store, { tier: 'free', label: 'two\nlines', now: NOW }), /control characters/);
  await assert.rejects(createKey(store, { tier: 'free', label: 'x'.repeat(201), now: NOW }), /at most 200/);
  assert.deepEqual(store.listKeys(), []);
  assert.deepEqual(store.listUsers(), []);
  assert.equal((await createKey(store, { tier: 'free', label: '', now: NOW })).record.label, null);
});

test('revokeKey sets revoked_at once; revoking again keeps it; unknown ids throw', async (t) => {
  const { store } = setup(t);
  const { record } = await createKey(store, { tier: 'free', now: NOW });
  const revoked = await revokeKey(store, record.id, NOW + 5000);
  assert.equal(revoked.revoked_at, '2026-11-20T12:00:05.000Z');
  assert.equal(store.getKey(record.id)?.revoked_at, '2026-11-20T12:00:05.000Z');
  assert.equal((await revokeKey(store, record.id, NOW + 9000)).revoked_at, '2026-11-20T12:00:05.000Z');
  await assert.rejects(revokeKey(store, 'key_ffffffffffffffff', NOW), { message: 'no API key key_ffffffffffffffff' });
  await assert.rejects(revokeKey(store, 'nonsense', NOW), { message: 'no API key nonsense' });
});

test('listKeys and listUsers are oldest first, revoked keys included', async (t) => {
  const { store } = setup(t);
  const b = await createKey(store, { tier: 'free', userId: 'b', now: NOW + 10 });
  const a = await createKey(store, { tier: 'pro', userId: 'a', now: NOW });
  await revokeKey(store, a.record.id, NOW + 20);
  assert.deepEqual(
    listKeys(store).map((k) => k.id),
    [a.record.id, b.record.id],
  );
  assert.deepEqual(
    listUsers(store).map((u) => u.id),
    ['a', 'b'],
  );
});

test('setUserTier creates, changes and leaves alone', async (t) => {
  const { store } = setup(t);
  assert.equal((await setUserTier(store, 'u1', 'pro', NOW)).change, 'created');
  assert.deepEqual(await setUserTier(store, 'u1', 'free', NOW + 1), {
    user: { id: 'u1', tier: 'free', created_at: '2026-11-20T12:00:00.000Z', updated_at: '2026-11-20T12:00:00.001Z' },
    change: 'tier-changed',
    previousTier: 'pro',
  });
  assert.equal((await setUserTier(store, 'u1', 'free', NOW + 2)).change, 'unchanged');
});
