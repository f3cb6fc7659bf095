/**
 * The embedded state store beyond the contract every store keeps (state-store-contract.test.ts):
 * the file it creates, counters by day with pruning, persistence across reopen, and — the reason LMDB was chosen — writes from ANOTHER process (the CLI)
 * seen by a store that stays open in this process (the server), on its next read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey } from '../../src/policy/api-keys.ts';
import { cleanup, tempDir } from '../helpers/test-cleanup.ts';
import { openLmdbStateStore, STATE_FILE } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';

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

test('a save prunes when its day moves past the last one pruned, and only then scans for old days', async (t) => {
  const defer = cleanup(t);
  const dir = tempDir(defer, 'hpd-state-');
  const store = openStore(defer, dir);
  await store.saveCounters('2026-11-20', new Map([['usr_a', 1]]));
  // Another process writes a day this one has already pruned past: the saves of the same day leave
  // it, the first save of the next day removes it.
  const other = openStore(defer, dir);
  await other.saveCounters('2026-11-12', new Map([['usr_z', 9]]));
  await store.saveCounters('2026-11-20', new Map([['usr_a', 2]]));
  assert.deepEqual(store.loadCounters('2026-11-12'), new Map([['usr_z', 9]]));
  await store.saveCounters('2026-11-21', new Map([['usr_a', 1]]));
  assert.deepEqual(store.loadCounters('2026-11-12'), new Map(), 'pruned once the day moved on');
  assert.deepEqual(store.loadCounters('2026-11-20'), new Map([['usr_a', 2]]), 'yesterday is kept');
  // A save for yesterday (the other table at midnight) does not move the pruned day back.
  await store.saveCounters('2026-11-20', new Map([['usr_a', 3]]));
  assert.deepEqual(store.loadCounters('2026-11-20'), new Map([['usr_a', 3]]));
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
