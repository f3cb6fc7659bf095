/**
 * Password hashing: the stored format, verification, and refusal of malformed or abusive stored values
 * (a corrupt record must answer "wrong password", never throw or allocate without bound).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { hashPassword, SCRYPT_PARAMS, verifyNothing, verifyPassword } from '../../src/auth-server/passwords.ts';

test('format scrypt$N$r$p$saltB64$hashB64 with a 16-byte random salt', async () => {
  const a = await hashPassword('correct horse');
  const b = await hashPassword('correct horse');
  const parts = a.split('$');
  assert.equal(parts.length, 6);
  assert.deepEqual(parts.slice(0, 4), ['scrypt', String(SCRYPT_PARAMS.N), String(SCRYPT_PARAMS.r), String(SCRYPT_PARAMS.p)]);
  assert.equal(Buffer.from(parts[4], 'base64').length, 16);
  assert.equal(Buffer.from(parts[5], 'base64').length, 32);
  assert.notEqual(a, b, 'salted');
  assert.ok(!a.includes('correct horse'));
});

test('verifies the right password only', async () => {
  const stored = await hashPassword('correct horse');
  assert.equal(await verifyPassword('correct horse', stored), true);
  assert.equal(await verifyPassword('correct horsE', stored), false);
  assert.equal(await verifyPassword('', stored), false);
});

test('NFC normalisation: composed and decomposed accents are the same password', async () => {
  const composed = 'caf\u00e9-p\u00e2t\u00e9';
  const decomposed = composed.normalize('NFD');
  assert.notEqual(composed, decomposed);
  assert.equal(await verifyPassword(decomposed, await hashPassword(composed)), true);
});

test('hashes with other parameters still verify (parameters travel with the hash)', async () => {
  const stored = await hashPassword('pw-12345678');
  const [, , , , salt] = stored.split('$');
  // Recompute with N=1024 by hand: a hash made under different (legacy) parameters.
  const legacy = `scrypt$1024$8$1$${salt}$${scryptSync('pw-12345678', Buffer.from(salt, 'base64'), 32, { N: 1024, r: 8, p: 1 }).toString('base64')}`;
  assert.equal(await verifyPassword('pw-12345678', legacy), true);
});

test('malformed or out-of-bounds stored values verify as false without throwing', async () => {
  const good = await hashPassword('pw-12345678');
  const [, , , , salt, key] = good.split('$');
  const bad = [
    '',
    'plaintext',
    `bcrypt$10$8$1$${salt}$${key}`,
    `scrypt$1000$8$1$${salt}$${key}`, // N not a power of two
    `scrypt$${2 ** 24}$8$1$${salt}$${key}`, // N too large: would allocate gigabytes
    `scrypt$32768$0$1$${salt}$${key}`,
    `scrypt$32768$8$99$${salt}$${key}`,
    `scrypt$32768$8$1$$${key}`,
    `scrypt$32768$8$1$${salt}$AAAA`, // hash too short
  ];
  for (const stored of bad) assert.equal(await verifyPassword('pw-12345678', stored), false, stored);
});

test('verifyNothing takes the time of a verification and fails', async () => {
  assert.equal(await verifyNothing('anything'), false);
});
