/**
 * What the authorization server keeps: the secrets, in a file (created once, owner-only, reused, never
 * silently replaced) or in Redis (created once with SET NX, validated the same way), and the adapter
 * behind oidc-provider. The adapter cases are one table run against both stores, LMDB and Redis (every
 * adapter method, expiry on the injected clock, grant revocation, survival across reopen); Redis-only
 * cases check its TTLs and that closing the store leaves the caller's client open.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { CLOCK_TOLERANCE_SECONDS, openOAuthStore, OAUTH_FILE, type OAuthStore } from '../../src/auth-server/lmdb-adapter.ts';
import { openRedisOAuthStore } from '../../src/auth-server/redis-adapter.ts';
import { loadOrCreateRedisAuthSecrets } from '../../src/auth-server/redis-secrets.ts';
import { loadOrCreateAuthSecrets, SECRETS_FILE } from '../../src/auth-server/secrets.ts';
import { normalizeAuthorizationQuery } from '../../src/auth-server/authorization-query.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';
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

/** One implementation of OAuthStore under test; `open` called twice opens the same storage again. */
interface StoreKind {
  name: string;
  /** Fresh, empty storage for one test; cleaned up through `defer`. */
  setup(t: TestContext): Promise<{ open(clock?: () => number): OAuthStore; defer: (fn: () => unknown) => void }>;
  /** What sweep() answers after one record expired: LMDB deletes it, Redis expires keys itself. */
  sweptAfterOneExpiry: number;
}

let testRedis: TestRedis | undefined;
before(async () => {
  testRedis = await startTestRedis();
});
after(() => testRedis?.close());

/** A client of the file's Redis, quit after the test. */
function redisClient(defer: (fn: () => unknown) => void): Redis {
  if (testRedis === undefined) throw new Error('redis-server not started');
  const redis = new Redis(testRedis.url, { lazyConnect: false });
  defer(() => redis.quit());
  return redis;
}

let prefixes = 0;

const STORES: StoreKind[] = [
  {
    name: 'lmdb',
    async setup(t) {
      const { dir, defer } = tempDir(t);
      const path = join(dir, OAUTH_FILE);
      return {
        defer,
        open(clock) {
          const store = openOAuthStore(path, clock);
          defer(() => store.close());
          return store;
        },
      };
    },
    sweptAfterOneExpiry: 1,
  },
  {
    name: 'redis',
    async setup(t) {
      const defer = cleanup(t);
      const redis = redisClient(defer);
      // One Redis for the file; each test its own key space.
      const prefix = `test${(prefixes += 1)}:oauth:`;
      return {
        defer,
        open(clock) {
          const store = openRedisOAuthStore(redis, { prefix, clock });
          defer(() => store.close());
          return store;
        },
      };
    },
    sweptAfterOneExpiry: 0,
  },
];

interface AdapterCase {
  name: string;
  run(kind: StoreKind, t: TestContext): Promise<void>;
}

const ADAPTER_CASES: AdapterCase[] = [
  {
    name: 'upsert/find/consume/destroy, per model, with expiry on the clock',
    async run(kind, t) {
      const storage = await kind.setup(t);
      let now = Date.parse('2026-11-20T12:00:00.000Z');
      const oauth = storage.open(() => now);
      const codes = oauth.adapterFor('AuthorizationCode');
      const clients = oauth.adapterFor('Client');
      assert.equal(oauth.adapterFor('AuthorizationCode'), codes, 'one adapter per model');

      await codes.upsert('c1', { jti: 'c1', grantId: 'g1', scope: 'openid' }, 60);
      await clients.upsert('client-a', { client_id: 'client-a', redirect_uris: ['http://127.0.0.1/cb'] }, undefined);
      assert.deepEqual(await codes.find('c1'), { jti: 'c1', grantId: 'g1', scope: 'openid' });
      assert.equal(await clients.find('c1'), undefined, 'models do not share ids');
      assert.equal(await codes.find('missing'), undefined);

      const before = Math.floor(Date.now() / 1000);
      await codes.consume('c1');
      const consumed = await codes.find('c1');
      assert.equal(typeof consumed?.consumed, 'number');
      assert.ok(Number(consumed?.consumed) >= before && Number(consumed?.consumed) <= Math.ceil(Date.now() / 1000), 'epoch seconds');
      assert.equal(consumed?.scope, 'openid', 'the rest of the payload kept');
      await codes.consume('missing');
      assert.equal(await codes.find('missing'), undefined, 'consuming nothing creates nothing');

      now += (60 + CLOCK_TOLERANCE_SECONDS) * 1000 - 1;
      assert.ok((await codes.find('c1')) !== undefined, 'still there within the tolerance');
      now += 1;
      assert.equal(await codes.find('c1'), undefined, 'expired');
      now += 1000 * 86_400_000;
      assert.ok((await clients.find('client-a')) !== undefined, 'no expiry = forever');

      assert.equal(await oauth.sweep(), kind.sweptAfterOneExpiry);
      await clients.destroy('client-a');
      assert.equal(await clients.find('client-a'), undefined);
    },
  },
  {
    name: 'payloads come back as stored (nested objects, empty arrays, unicode); an upsert replaces the whole record',
    async run(kind, t) {
      const oauth = (await kind.setup(t)).open();
      const clients = oauth.adapterFor('Client');
      const payload = {
        client_id: 'ç-1',
        redirect_uris: [],
        post_logout_redirect_uris: [],
        jwks: { keys: [] },
        'x:y': { n: 1.5, ok: true, nothing: null },
        client_name: 'Ünïcødé 🚀',
      };
      await clients.upsert('ç-1:with:colons', payload, undefined);
      assert.deepEqual(await clients.find('ç-1:with:colons'), payload);

      const codes = oauth.adapterFor('AuthorizationCode');
      await codes.upsert('c1', { jti: 'c1', grantId: 'g1', extra: 'old' }, 60);
      await codes.consume('c1');
      await codes.upsert('c1', { jti: 'c1', grantId: 'g2' }, 60);
      assert.deepEqual(await codes.find('c1'), { jti: 'c1', grantId: 'g2' }, 'consumed and old fields gone');
      // Re-filed under g2: revoking g1 leaves it, revoking g2 removes it.
      await codes.revokeByGrantId('g1');
      assert.ok((await codes.find('c1')) !== undefined);
      await codes.revokeByGrantId('g2');
      assert.equal(await codes.find('c1'), undefined);
    },
  },
  {
    name: 'findByUid (sessions), findByUserCode, and revokeByGrantId removes every member of the grant',
    async run(kind, t) {
      let now = Date.now();
      const oauth = (await kind.setup(t)).open(() => now);
      const sessions = oauth.adapterFor('Session');
      await sessions.upsert('s1', { jti: 's1', uid: 'u-1', accountId: 'usr_1' }, 3600);
      assert.equal((await sessions.findByUid('u-1'))?.accountId, 'usr_1');
      // A session re-saved under a new uid (as the provider does on login) drops the old index entry.
      await sessions.upsert('s1', { jti: 's1', uid: 'u-2', accountId: 'usr_1' }, 3600);
      assert.equal(await sessions.findByUid('u-1'), undefined);
      assert.equal((await sessions.findByUid('u-2'))?.jti, 's1');
      await sessions.destroy('s1');
      assert.equal(await sessions.findByUid('u-2'), undefined);

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

      // Expired records are invisible through the indexes too.
      await sessions.upsert('s2', { jti: 's2', uid: 'u-3' }, 10);
      await devices.upsert('d2', { jti: 'd2', userCode: 'WXYZ-0000' }, 10);
      now += (10 + CLOCK_TOLERANCE_SECONDS) * 1000;
      assert.equal(await sessions.findByUid('u-3'), undefined);
      assert.equal(await devices.findByUserCode('WXYZ-0000'), undefined);
    },
  },
  {
    name: 'records survive closing and reopening the store',
    async run(kind, t) {
      const storage = await kind.setup(t);
      const first = storage.open();
      await first.adapterFor('Client').upsert('client-a', { client_id: 'client-a' }, undefined);
      await first.adapterFor('RefreshToken').upsert('r1', { jti: 'r1', grantId: 'g1' }, 3600);
      await first.close();
      const second = storage.open();
      assert.equal((await second.adapterFor('Client').find('client-a'))?.client_id, 'client-a');
      assert.equal((await second.adapterFor('RefreshToken').find('r1'))?.grantId, 'g1');
      await second.adapterFor('Grant').revokeByGrantId('g1');
      assert.equal(await second.adapterFor('RefreshToken').find('r1'), undefined, 'the grant index survived too');
    },
  },
];

for (const kind of STORES) {
  for (const c of ADAPTER_CASES) {
    test(`adapter (${kind.name}): ${c.name}`, (t) => c.run(kind, t));
  }
}

test('adapter (redis): records, indexes and grant sets carry Redis TTLs; close() leaves the client open', async (t) => {
  const defer = cleanup(t);
  const redis = redisClient(defer);
  const prefix = `ttl${(prefixes += 1)}:`;
  const oauth = openRedisOAuthStore(redis, { prefix });
  const ttlOf = (key: string): Promise<number> => redis.pttl(`${prefix}${key}`);
  const near = (actual: number, expected: number): void =>
    assert.ok(actual <= expected && actual > expected - 5000, `${actual} ≈ ${expected}`);

  await oauth.adapterFor('Session').upsert('s1', { jti: 's1', uid: 'u-1' }, 3600);
  near(await ttlOf('rec:Session:s1'), (3600 + CLOCK_TOLERANCE_SECONDS) * 1000);
  near(await ttlOf('uid:Session:u-1'), (3600 + CLOCK_TOLERANCE_SECONDS) * 1000);
  await oauth.adapterFor('Client').upsert('cl', { client_id: 'cl' }, undefined);
  assert.equal(await ttlOf('rec:Client:cl'), -1, 'no expiry');

  const refresh = oauth.adapterFor('RefreshToken');
  await refresh.upsert('r1', { jti: 'r1', grantId: 'g1' }, 3600);
  await refresh.upsert('r2', { jti: 'r2', grantId: 'g1' }, 60);
  near(await ttlOf('grant:g1'), (3600 + CLOCK_TOLERANCE_SECONDS) * 1000);
  await refresh.upsert('r3', { jti: 'r3', grantId: 'g1' }, 7200);
  near(await ttlOf('grant:g1'), (7200 + CLOCK_TOLERANCE_SECONDS) * 1000);
  await refresh.consume('r1');
  near(await ttlOf('rec:RefreshToken:r1'), (3600 + CLOCK_TOLERANCE_SECONDS) * 1000);

  await refresh.revokeByGrantId('g1');
  assert.deepEqual(
    (await redis.keys(`${prefix}*`)).sort(),
    [`${prefix}rec:Client:cl`, `${prefix}rec:Session:s1`, `${prefix}uid:Session:u-1`],
    'nothing of the grant left',
  );

  // Redis, not a sweep, removes what expired: a record stored with a 200 ms lifetime goes by itself.
  await oauth.adapterFor('AuthorizationCode').upsert('short', { jti: 'short', grantId: 'g2' }, -CLOCK_TOLERANCE_SECONDS + 0.2);
  assert.equal(await redis.exists(`${prefix}rec:AuthorizationCode:short`), 1);
  await eventually('Redis expires the record by itself', async () => (await redis.exists(`${prefix}rec:AuthorizationCode:short`)) === 0);
  assert.equal(await redis.exists(`${prefix}grant:g2`), 0);
  assert.equal(await oauth.sweep(), 0);

  await oauth.close();
  assert.equal(await redis.ping(), 'PONG', "the caller's client is still usable");
});

test('secrets (redis): created once, reused; concurrent first starts agree on one value', async (t) => {
  const defer = cleanup(t);
  const [a, b, c] = [redisClient(defer), redisClient(defer), redisClient(defer)];
  const key = `secrets${(prefixes += 1)}`;
  const [first, second] = await Promise.all([loadOrCreateRedisAuthSecrets(a, key), loadOrCreateRedisAuthSecrets(b, key)]);
  assert.deepEqual(second, first);
  assert.equal(first.signingKeys.length, 1);
  assert.equal(first.signingKeys[0].alg, 'RS256');
  assert.match(first.signingKeys[0].kid ?? '', /^[A-Za-z0-9_-]{43}$/);
  const stored = await c.get(key);
  assert.deepEqual(await loadOrCreateRedisAuthSecrets(c, key), first);
  assert.equal(await c.get(key), stored, 'not rewritten');
  assert.equal(typeof (await loadOrCreateRedisAuthSecrets(c)).cookieKeys[0], 'string', 'default key works');
});

test('secrets (redis): a damaged value is an error naming the key, validated like the file, left untouched', async (t) => {
  const defer = cleanup(t);
  const redis = redisClient(defer);
  const key = `damaged${(prefixes += 1)}`;
  await redis.set(key, '{"version":1,');
  await assert.rejects(
    loadOrCreateRedisAuthSecrets(redis, key),
    (err: Error) => err.message.includes(key) && /not valid JSON/.test(err.message),
  );
  const wrongShape = JSON.stringify({ version: 1, signing_keys: [{ kty: 'RSA' }], cookie_keys: ['x'.repeat(43)] });
  await redis.set(key, wrongShape);
  await assert.rejects(loadOrCreateRedisAuthSecrets(redis, key), /version-1 auth secrets/);
  assert.equal(await redis.get(key), wrongShape, 'left untouched');
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
  assert.equal(q('scope=a&scope=b'), undefined, "duplicates are the provider's to reject");
});
