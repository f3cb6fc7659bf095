/**
 * What the authorization server keeps on disk: the secrets file (created once, owner-only, reused,
 * never silently replaced) and the LMDB adapter behind oidc-provider (every adapter method, expiry on
 * the injected clock, grant revocation, survival across reopen).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLOCK_TOLERANCE_SECONDS, openOAuthStore, OAUTH_FILE } from '../../src/auth-server/lmdb-adapter.ts';
import { loadOrCreateAuthSecrets, SECRETS_FILE } from '../../src/auth-server/secrets.ts';
import { normalizeAuthorizationQuery } from '../../src/auth-server/server.ts';
import { cleanup } from './oauth-test-client.ts';

function tempDir(t: TestContext): { dir: string; defer: (fn: () => unknown) => void } {
  const defer = cleanup(t);
  const dir = mkdtempSync(join(tmpdir(), 'hpd-auth-store-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, defer };
}

test('secrets: created once with mode 0600, then reused byte for byte', async (t) => {
  const { dir } = tempDir(t);
  const first = await loadOrCreateAuthSecrets(dir);
  const path = join(dir, SECRETS_FILE);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(first.signingKeys.length, 1);
  const key = first.signingKeys[0];
  assert.equal(key.kty, 'RSA');
  assert.equal(key.alg, 'RS256');
  assert.equal(key.use, 'sig');
  assert.equal(typeof key.d, 'string');
  assert.match(key.kid ?? '', /^[A-Za-z0-9_-]{43}$/, 'RFC 7638 thumbprint');
  assert.equal(first.cookieKeys.length, 1);
  const text = readFileSync(path, 'utf8');
  const second = await loadOrCreateAuthSecrets(dir);
  assert.deepEqual(second, first);
  assert.equal(readFileSync(path, 'utf8'), text);
});

test('secrets: concurrent first starts agree on one file', async (t) => {
  const { dir } = tempDir(t);
  const [a, b] = await Promise.all([loadOrCreateAuthSecrets(dir), loadOrCreateAuthSecrets(dir)]);
  assert.deepEqual(a, b);
});

test('secrets: a damaged file is an error naming it, not a silent new key', async (t) => {
  const { dir } = tempDir(t);
  const path = join(dir, SECRETS_FILE);
  writeFileSync(path, '{"version":1,', { mode: 0o600 });
  await assert.rejects(loadOrCreateAuthSecrets(dir), (err: Error) => err.message.includes(path));
  writeFileSync(path, JSON.stringify({ version: 1, signing_keys: [{ kty: 'RSA' }], cookie_keys: ['x'.repeat(43)] }));
  await assert.rejects(loadOrCreateAuthSecrets(dir), /version-1 auth secrets/);
  assert.equal(readFileSync(path, 'utf8').includes('"kty":"RSA"'), true, 'left untouched');
});

test('adapter: upsert/find/consume/destroy, per model, with expiry on the clock', async (t) => {
  const { dir, defer } = tempDir(t);
  let now = Date.parse('2026-11-20T12:00:00.000Z');
  const oauth = openOAuthStore(join(dir, OAUTH_FILE), () => now);
  defer(() => oauth.close());
  const codes = oauth.adapterFor('AuthorizationCode');
  const clients = oauth.adapterFor('Client');
  assert.equal(oauth.adapterFor('AuthorizationCode'), codes, 'one adapter per model');

  await codes.upsert('c1', { jti: 'c1', grantId: 'g1', scope: 'openid' }, 60);
  await clients.upsert('client-a', { client_id: 'client-a', redirect_uris: ['http://127.0.0.1/cb'] }, undefined);
  assert.deepEqual(await codes.find('c1'), { jti: 'c1', grantId: 'g1', scope: 'openid' });
  assert.equal(await clients.find('c1'), undefined, 'models do not share ids');
  assert.equal(await codes.find('missing'), undefined);

  await codes.consume('c1');
  const consumed = await codes.find('c1');
  assert.equal(typeof consumed?.consumed, 'number');

  now += (60 + CLOCK_TOLERANCE_SECONDS) * 1000 - 1;
  assert.ok((await codes.find('c1')) !== undefined, 'still there within the tolerance');
  now += 1;
  assert.equal(await codes.find('c1'), undefined, 'expired');
  now += 1000 * 86_400_000;
  assert.ok((await clients.find('client-a')) !== undefined, 'no expiry = forever');

  assert.equal(await oauth.sweep(), 1);
  await clients.destroy('client-a');
  assert.equal(await clients.find('client-a'), undefined);
});

test('adapter: findByUid (sessions), findByUserCode, and revokeByGrantId removes every member of the grant', async (t) => {
  const { dir, defer } = tempDir(t);
  const oauth = openOAuthStore(join(dir, OAUTH_FILE));
  defer(() => oauth.close());
  const sessions = oauth.adapterFor('Session');
  await sessions.upsert('s1', { jti: 's1', uid: 'u-1', accountId: 'usr_1' }, 3600);
  assert.equal((await sessions.findByUid('u-1'))?.accountId, 'usr_1');
  // A session re-saved under a new uid (as the provider does on login) drops the old index entry.
  await sessions.upsert('s1', { jti: 's1', uid: 'u-2', accountId: 'usr_1' }, 3600);
  assert.equal(await sessions.findByUid('u-1'), undefined);
  assert.equal((await sessions.findByUid('u-2'))?.jti, 's1');

  const devices = oauth.adapterFor('DeviceCode');
  await devices.upsert('d1', { jti: 'd1', userCode: 'ABCD-EFGH' }, 600);
  assert.equal((await devices.findByUserCode('ABCD-EFGH'))?.jti, 'd1');
  await devices.destroy('d1');
  assert.equal(await devices.findByUserCode('ABCD-EFGH'), undefined);

  const refresh = oauth.adapterFor('RefreshToken');
  const codes = oauth.adapterFor('AuthorizationCode');
  await refresh.upsert('r1', { jti: 'r1', grantId: 'g1' }, 3600);
  await refresh.upsert('r2', { jti: 'r2', grantId: 'g1' }, 3600);
  await codes.upsert('c1', { jti: 'c1', grantId: 'g1' }, 60);
  await refresh.upsert('r3', { jti: 'r3', grantId: 'g10' }, 3600); // a grant id that shares a prefix
  await codes.revokeByGrantId('g1');
  assert.equal(await refresh.find('r1'), undefined);
  assert.equal(await refresh.find('r2'), undefined);
  assert.equal(await codes.find('c1'), undefined);
  assert.ok((await refresh.find('r3')) !== undefined, 'other grants untouched');
});

test('adapter: records survive closing and reopening the file', async (t) => {
  const { dir } = tempDir(t);
  const path = join(dir, OAUTH_FILE);
  const first = openOAuthStore(path);
  await first.adapterFor('Client').upsert('client-a', { client_id: 'client-a' }, undefined);
  await first.adapterFor('RefreshToken').upsert('r1', { jti: 'r1', grantId: 'g1' }, 3600);
  await first.close();
  const second = openOAuthStore(path);
  t.after(() => second.close());
  assert.equal((await second.adapterFor('Client').find('client-a'))?.client_id, 'client-a');
  assert.equal((await second.adapterFor('RefreshToken').find('r1'))?.grantId, 'g1');
  await second.adapterFor('Grant').revokeByGrantId('g1');
  assert.equal(await second.adapterFor('RefreshToken').find('r1'), undefined, 'the grant index survived too');
});

test('authorization query: default scope, consent prompt added for offline_access, otherwise untouched', () => {
  const q = (s: string): URLSearchParams | undefined => {
    const out = normalizeAuthorizationQuery(s);
    return out === undefined ? undefined : new URLSearchParams(out);
  };
  assert.equal(q('client_id=a&scope=openid')?.toString(), undefined);
  assert.equal(q('client_id=a&scope=openid+offline_access')?.get('prompt'), 'consent');
  assert.equal(q('client_id=a&scope=openid%20offline_access&prompt=login')?.get('prompt'), 'login consent');
  assert.equal(q('client_id=a&scope=offline_access&prompt=consent'), undefined);
  assert.equal(q('client_id=a&scope=offline_access&prompt=none'), undefined);
  const defaulted = q('client_id=a&resource=http%3A%2F%2Fx');
  assert.equal(defaulted?.get('scope'), 'openid profile email offline_access');
  assert.equal(defaulted?.get('prompt'), 'consent');
  assert.equal(defaulted?.get('resource'), 'http://x');
  assert.equal(q('scope=a&scope=b'), undefined, 'duplicates are the provider\'s to reject');
});
