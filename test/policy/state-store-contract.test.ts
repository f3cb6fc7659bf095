/**
 * What every StateStore does, run against both: the embedded LMDB store and the Redis store. Records
 * round-trip by id and hash, writes are read-modify-write, a key can be removed under a condition, the
 * generation moves with every write that can change an authentication and with nothing else, and
 * another handle on the same state sees each such write within a second.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashKey } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { connectRedis } from '../../src/policy/redis-link.ts';
import { openRedisStateStore } from '../../src/policy/redis-store.ts';
import type { ApiKeyRecord, StateStore, UserRecord } from '../../src/policy/state-store.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.ts';
import { cleanup, tempDir } from '../helpers/test-cleanup.ts';
import { eventually } from '../helpers/eventually.ts';

interface Opened {
  readonly store: StateStore;
  /** Another handle on the same state (another instance, or the CLI beside a server). */
  other(): Promise<StateStore>;
}

type Backend = (t: TestContext) => Promise<Opened>;

const id = (prefix: string): string => `${prefix}_${randomBytes(8).toString('hex')}`;

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: id('key'),
    hash: hashKey(`hpd_${randomBytes(20).toString('hex')}`),
    user_id: 'usr_contract',
    label: null,
    tier_at_creation: 'free',
    created_at: '2026-11-20T12:00:00.000Z',
    last_used_at: null,
    revoked_at: null,
    ...overrides,
  };
}

const user = (overrides: Partial<UserRecord> = {}): UserRecord => ({
  id: id('usr'),
  tier: 'free',
  created_at: '2026-11-20T12:00:00.000Z',
  updated_at: '2026-11-20T12:00:00.000Z',
  ...overrides,
});

function contract(name: string, backend: Backend): void {
  describe(`${name} state store`, () => {
    test('keys round-trip by id and by hash; unknown ones are undefined; health is ok', async (t) => {
      const { store } = await backend(t);
      const rec = keyRecord({ label: 'ci' });
      await store.putKey(rec);
      assert.deepEqual(store.getKey(rec.id), rec);
      assert.deepEqual(store.getKeyByHash(rec.hash), rec);
      assert.equal(store.getKey(id('key')), undefined);
      assert.equal(store.getKeyByHash(hashKey('hpd_nothing')), undefined);
      assert.deepEqual(
        store.listKeys().filter((k) => k.id === rec.id),
        [rec],
      );
      assert.equal(store.health(), 'ok');
    });

    test('re-putting a key with another hash drops the old hash from the index', async (t) => {
      const { store } = await backend(t);
      const rec = keyRecord();
      await store.putKey(rec);
      const newHash = hashKey(`hpd_${'2'.repeat(40)}`);
      await store.putKey({ ...rec, hash: newHash });
      assert.equal(store.getKeyByHash(rec.hash), undefined);
      assert.equal(store.getKeyByHash(newHash)?.id, rec.id);
    });

    test('updateKey is a read-modify-write: undefined for unknown ids, unchanged when the update declines', async (t) => {
      const { store } = await backend(t);
      const rec = keyRecord();
      await store.putKey(rec);
      assert.equal(await store.updateKey(id('key'), (k) => k), undefined);
      assert.deepEqual(await store.updateKey(rec.id, () => undefined), rec);
      const updated = await store.updateKey(rec.id, (k) => ({ ...k, label: 'renamed' }));
      assert.equal(updated?.label, 'renamed');
      assert.equal(store.getKey(rec.id)?.label, 'renamed');
      await assert.rejects(
        store.updateKey(rec.id, (k) => ({ ...k, hash: 'other' })),
        /must not change/,
      );
    });

    test('removeKey deletes a key and its hash entry only when the condition holds for the stored record', async (t) => {
      const { store } = await backend(t);
      const rec = keyRecord();
      await store.putKey(rec);
      assert.equal(await store.removeKey(id('key'), () => true), undefined);
      assert.equal(await store.removeKey(rec.id, (k) => k.revoked_at !== null), undefined);
      assert.deepEqual(store.getKey(rec.id), rec, 'a declined removal keeps the key');
      const revoked = await store.updateKey(rec.id, (k) => ({ ...k, revoked_at: '2026-11-21T00:00:00.000Z' }));
      assert.deepEqual(await store.removeKey(rec.id, (k) => k.revoked_at !== null), revoked);
      assert.equal(store.getKey(rec.id), undefined);
      assert.equal(store.getKeyByHash(rec.hash), undefined);
      assert.ok(!store.listKeys().some((k) => k.id === rec.id));
    });

    test('users round-trip; updateUser inserts and updates', async (t) => {
      const { store } = await backend(t);
      const b = id('usr');
      const created = await store.updateUser(b, (u) => u ?? user({ id: b, tier: 'pro' }));
      assert.equal(created?.tier, 'pro');
      const a = user({ email: 'a@example.com' });
      await store.putUser(a);
      assert.equal(store.getUser(a.id)?.email, 'a@example.com');
      assert.equal(store.getUser(id('usr')), undefined);
      assert.deepEqual(
        store
          .listUsers()
          .map((u) => u.id)
          .filter((u) => u === a.id || u === b)
          .sort(),
        [a.id, b].sort(),
      );
      assert.equal((await store.updateUser(b, (u) => (u === undefined ? undefined : { ...u, tier: 'enterprise' })))?.tier, 'enterprise');
    });

    test('the generation moves with every write that can change an authentication, and not with a last-use touch', async (t) => {
      const { store } = await backend(t);
      const moved = async (write: () => Promise<unknown>): Promise<boolean> => {
        const before = store.generation();
        await write();
        // The embedded store re-reads its generation at most once a millisecond.
        await new Promise((r) => setTimeout(r, 2));
        return store.generation() !== before;
      };
      const rec = keyRecord();
      const u = user();
      assert.equal(await moved(() => store.putUser(u)), true, 'a user created');
      assert.equal(await moved(() => store.putKey(rec)), true, 'a key created');
      assert.equal(
        await moved(() => store.updateKey(rec.id, (k) => ({ ...k, last_used_at: '2026-11-21T00:00:00.000Z' }))),
        false,
        'a touch',
      );
      assert.equal(
        await moved(() => store.updateUser(u.id, (x) => (x === undefined ? undefined : { ...x, tier: 'pro' }))),
        true,
        'a tier change',
      );
      assert.equal(
        await moved(() => store.updateKey(rec.id, (k) => ({ ...k, revoked_at: '2026-11-21T00:00:00.000Z' }))),
        true,
        'a revocation',
      );
      assert.equal(await moved(() => store.removeKey(rec.id, () => true)), true, 'a removal');
    });

    test('another handle on the same state sees a key created, revoked and removed within a second', async (t) => {
      const opened = await backend(t);
      const other = await opened.other();
      const rec = keyRecord();
      await opened.store.putKey(rec);
      await eventually('the key', () => other.getKeyByHash(rec.hash)?.id === rec.id, 1000);
      await opened.store.updateKey(rec.id, (k) => ({ ...k, revoked_at: '2026-11-21T00:00:00.000Z' }));
      await eventually('the revocation', () => other.getKeyByHash(rec.hash)?.revoked_at === '2026-11-21T00:00:00.000Z', 1000);
      await opened.store.removeKey(rec.id, () => true);
      await eventually('the removal', () => other.getKey(rec.id) === undefined && other.getKeyByHash(rec.hash) === undefined, 1000);
    });
  });
}

contract('LMDB', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-contract-');
  const open = (): StateStore => {
    const s = openLmdbStateStore(dir);
    defer(() => s.close());
    return s;
  };
  return { store: open(), other: async () => open() };
});

let redis: TestRedis | undefined;
before(async () => {
  redis = await startTestRedis({ persistent: false });
});
after(() => redis?.close());

contract('Redis', async (t) => {
  const defer = cleanup(t);
  const open = async (): Promise<StateStore> => {
    const link = await connectRedis(redis!.url, { log: () => {} });
    defer(() => link.close());
    const s = await openRedisStateStore(link);
    defer(() => s.close());
    return s;
  };
  return { store: await open(), other: open };
});
