/**
 * The embedded state store: records round-trip, the hash index, counters by day with pruning,
 * persistence across reopen, and — the reason LMDB was chosen — writes from ANOTHER process (the CLI)
 * seen by a store that stays open in this process (the server), on its next read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey, hashKey } from '../../src/policy/api-keys.ts';
import { cleanup, tempDir } from '../helpers/test-cleanup.ts';
import { openLmdbStateStore, STATE_FILE } from '../../src/policy/lmdb-store.ts';
import type { ApiKeyRecord, StateStore } from '../../src/policy/state-store.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NOW = Date.parse('2026-11-20T12:00:00.000Z');

/** Opens a store; `close()` may be called by the test, otherwise it runs during cleanup. */
function openStore(defer: (fn: () => unknown) => void, dir: string): StateStore {
  const store = openLmdbStateStore(dir);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= store.close());
  defer(close);
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'close') return close;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: 'key_0123456789abcdef',
    hash: hashKey(`hpd_${'1'.repeat(40)}`),
    user_id: 'usr_a',
    label: null,
    tier_at_creation: 'free',
    created_at: '2026-11-20T12:00:00.000Z',
    last_used_at: null,
    revoked_at: null,
    ...overrides,
  };
}

/** Runs an ES module snippet in a fresh Node process (through our TypeScript hooks) with lmdb-store.ts as `store` and api-keys.ts as `keys`. */
function runChild(code: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const prelude = `
    const store = await import(${JSON.stringify(new URL('../../src/policy/lmdb-store.ts', import.meta.url).href)});
    const keys = await import(${JSON.stringify(new URL('../../src/policy/api-keys.ts', import.meta.url).href)});
  `;
  const child = spawn(
    process.execPath,
    ['--import', join(ROOT, 'bin/register-typescript.js'), '--input-type=module', '-e', prelude + code],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('creates the directory and one state.mdb file (noSubdir)', async (t) => {
  const defer = cleanup(t);
  const dir = join(tempDir(defer, 'hpd-state-'), 'nested', 'var');
  const store = openStore(defer, dir);
  await store.putUser({ id: 'usr_a', tier: 'free', created_at: 'x', updated_at: 'x' });
  await store.close();
  assert.ok(existsSync(join(dir, STATE_FILE)));
});

test('keys round-trip by id and by hash; unknown ones are undefined', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-state-'));
  const rec = keyRecord({ label: 'ci' });
  await store.putKey(rec);
  assert.deepEqual(store.getKey(rec.id), rec);
  assert.deepEqual(store.getKeyByHash(rec.hash), rec);
  assert.equal(store.getKey('key_ffffffffffffffff'), undefined);
  assert.equal(store.getKeyByHash(hashKey('hpd_nothing')), undefined);
  assert.deepEqual(store.listKeys(), [rec]);
});

test('re-putting a key with another hash drops the old hash from the index', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-state-'));
  const rec = keyRecord();
  await store.putKey(rec);
  const newHash = hashKey(`hpd_${'2'.repeat(40)}`);
  await store.putKey({ ...rec, hash: newHash });
  assert.equal(store.getKeyByHash(rec.hash), undefined);
  assert.equal(store.getKeyByHash(newHash)?.id, rec.id);
});

test('updateKey is a read-modify-write: undefined for unknown ids, unchanged when the update declines', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-state-'));
  const rec = keyRecord();
  await store.putKey(rec);
  assert.equal(await store.updateKey('key_ffffffffffffffff', (k) => k), undefined);
  assert.deepEqual(await store.updateKey(rec.id, () => undefined), rec);
  const updated = await store.updateKey(rec.id, (k) => ({ ...k, label: 'renamed' }));
  assert.equal(updated?.label, 'renamed');
  assert.equal(store.getKey(rec.id)?.label, 'renamed');
  await assert.rejects(
    store.updateKey(rec.id, (k) => ({ ...k, hash: 'other' })),
    /must not change/,
  );
});

test('users round-trip, updateUser inserts and updates', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-state-'));
  const created = await store.updateUser('usr_b', (u) => u ?? { id: 'usr_b', tier: 'pro', created_at: 'a', updated_at: 'a' });
  assert.equal(created?.tier, 'pro');
  await store.putUser({ id: 'usr_a', tier: 'free', created_at: 'b', updated_at: 'b', email: 'a@example.com' });
  assert.equal(store.getUser('usr_a')?.email, 'a@example.com');
  assert.equal(store.getUser('usr_c'), undefined);
  assert.deepEqual(
    store
      .listUsers()
      .map((u) => u.id)
      .sort(),
    ['usr_a', 'usr_b'],
  );
});

test('counters are per day, saves merge per user, and days older than yesterday are pruned', async (t) => {
  const defer = cleanup(t);
  const store = openStore(defer, tempDir(defer, 'hpd-state-'));
  await store.saveCounters('2026-11-18', new Map([['usr_a', 5]]));
  await store.saveCounters('2026-11-19', new Map([['usr_a', 7]]));
  await store.saveCounters(
    '2026-11-20',
    new Map([
      ['usr_a', 1],
      ['usr_b', 2],
    ]),
  );
  await store.saveCounters('2026-11-20', new Map([['usr_a', 3]]));
  assert.deepEqual(
    store.loadCounters('2026-11-20'),
    new Map([
      ['usr_a', 3],
      ['usr_b', 2],
    ]),
  );
  assert.deepEqual(store.loadCounters('2026-11-19'), new Map([['usr_a', 7]]));
  assert.deepEqual(store.loadCounters('2026-11-18'), new Map(), 'two days before the saved day is pruned');
  assert.deepEqual(store.loadCounters('2026-11-21'), new Map());
  assert.throws(() => store.loadCounters('20261120'), /YYYY-MM-DD/);
});

test('everything survives closing and reopening the store', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-state-');
  const first = openStore(defer, dir);
  const { record } = await createKey(first, { tier: 'pro', userId: 'usr_a', now: NOW });
  await first.saveCounters('2026-11-20', new Map([['usr_a', 42]]));
  await first.close();
  const second = openStore(defer, dir);
  assert.deepEqual(second.getKey(record.id), record);
  assert.equal(second.getUser('usr_a')?.tier, 'pro');
  assert.equal(second.loadCounters('2026-11-20').get('usr_a'), 42);
});

test('a revocation and a tier change written by another process are seen by this open store on the next get', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-state-');
  const store = openStore(defer, dir);
  const { record } = await createKey(store, { tier: 'pro', userId: 'usr_a', now: NOW });
  // Reads before the child runs, so this process holds a read snapshot that must be renewed.
  assert.equal(store.getKeyByHash(record.hash)?.revoked_at, null);
  assert.equal(store.getUser('usr_a')?.tier, 'pro');
  const child = await runChild(
    `
    const s = store.openLmdbStateStore(process.env.STATE_DIR);
    await keys.revokeKey(s, process.env.KEY_ID, Date.now());
    await keys.setUserTier(s, 'usr_a', 'free', Date.now());
    await s.close();
    `,
    { STATE_DIR: dir, KEY_ID: record.id },
  );
  assert.equal(child.code, 0, child.stderr);
  assert.notEqual(store.getKeyByHash(record.hash)?.revoked_at, null);
  assert.equal(store.getUser('usr_a')?.tier, 'free');
});
