/**
 * Accounts created by the sign-up form: the record written to the shared user registry, validation,
 * and one account per address even when two sign-ups race.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, findUserByEmail, SignupError, verifyPassword } from '../../src/auth-server/index.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { cleanup } from './oauth-test-client.ts';

const NOW = Date.parse('2026-11-20T12:00:00.000Z');

function tempStore(t: TestContext): StateStore {
  const defer = cleanup(t);
  const dir = mkdtempSync(join(tmpdir(), 'hpd-auth-users-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const store = openLmdbStateStore(dir);
  defer(() => store.close());
  return store;
}

test('createUser writes a Free user with a normalised e-mail and an scrypt hash', async (t) => {
  const store = tempStore(t);
  const user = await createUser(store, ' Zoe@Example.COM ', 'long enough pw', NOW);
  assert.match(user.id, /^usr_[0-9a-f]{16}$/);
  assert.equal(user.tier, 'free');
  assert.equal(user.email, 'zoe@example.com');
  assert.equal(user.created_at, '2026-11-20T12:00:00.000Z');
  assert.equal(user.updated_at, '2026-11-20T12:00:00.000Z');
  assert.match(user.password_hash ?? '', /^scrypt\$/);
  assert.equal(await verifyPassword('long enough pw', user.password_hash ?? ''), true);
  assert.deepEqual(store.getUser(user.id), user);
  assert.equal(findUserByEmail(store, 'ZOE@example.com')?.id, user.id);
  assert.equal(findUserByEmail(store, 'other@example.com'), undefined);
});

test('validation: address shape, password length in characters', async (t) => {
  const store = tempStore(t);
  const refusals: Array<[string, string, string]> = [
    ['no-at-sign', 'long enough pw', 'invalid-email'],
    ['a@b', 'long enough pw', 'invalid-email'],
    ['sp ace@example.org', 'long enough pw', 'invalid-email'],
    [`${'x'.repeat(250)}@example.org`, 'long enough pw', 'invalid-email'],
    ['ok@example.org', '1234567', 'password-too-short'],
    ['ok@example.org', '😀😀😀😀😀😀😀', 'password-too-short'], // 14 UTF-16 units, 7 characters
    ['ok@example.org', 'x'.repeat(1025), 'password-too-long'],
  ];
  for (const [email, password, code] of refusals) {
    await assert.rejects(
      createUser(store, email, password, NOW),
      (err: unknown) => err instanceof SignupError && err.code === code,
      `${email} / ${password.length}`,
    );
  }
  assert.equal(store.listUsers().length, 0);
  await createUser(store, 'ok@example.org', '😀😀😀😀😀😀😀😀', NOW); // 8 characters
});

test('one account per address, also when two sign-ups race', async (t) => {
  const store = tempStore(t);
  const results = await Promise.allSettled([
    createUser(store, 'race@example.org', 'password-one', NOW),
    createUser(store, 'RACE@example.org', 'password-two', NOW),
  ]);
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  const rejected = results.find((r) => r.status === 'rejected');
  assert.ok(rejected !== undefined && rejected.reason instanceof SignupError && rejected.reason.code === 'email-taken');
  assert.equal(store.listUsers().length, 1);
  await assert.rejects(createUser(store, 'race@example.org', 'password-three', NOW), SignupError);
});

test('users from the CLI (no e-mail) coexist and cannot be logged into', async (t) => {
  const store = tempStore(t);
  await store.putUser({ id: 'acct-42', tier: 'pro', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });
  assert.equal(findUserByEmail(store, ''), undefined);
  const user = await createUser(store, 'new@example.org', 'long enough pw', NOW);
  assert.equal(store.listUsers().length, 2);
  assert.equal(findUserByEmail(store, 'new@example.org')?.id, user.id);
});
