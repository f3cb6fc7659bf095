import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthCache } from '../../src/policy/auth-cache.ts';
import { createKey, setUserTier } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';

const HPD = fileURLToPath(new URL('../../bin/hpd.js', import.meta.url));

/** Counts store reads so the test can see hits being served from memory. */
function counting(store: StateStore): { store: StateStore; reads: () => number } {
  let n = 0;
  const wrapped = Object.create(store) as StateStore;
  wrapped.getKeyByHash = (h) => {
    n++;
    return store.getKeyByHash(h);
  };
  wrapped.getUser = (id) => {
    n++;
    return store.getUser(id);
  };
  wrapped.generation = () => store.generation();
  wrapped.updateKey = (id, f) => store.updateKey(id, f);
  return { store: wrapped, reads: () => n };
}

test('the auth cache serves repeats from memory and stays exact: revocations (also from another process) and tier changes apply to the next request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-authcache-'));
  const base = openLmdbStateStore(dir);
  t.after(async () => {
    await base.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const now = Date.parse('2026-11-20T12:00:00Z');
  const { plaintext, record } = await createKey(base, { tier: 'free', userId: 'usr_cache', now });
  const { store, reads } = counting(base);
  const cache = new AuthCache(store);
  const header = `Bearer ${plaintext}`;

  const first = cache.authenticate(header, now);
  assert.deepEqual(first, { ok: true, userId: 'usr_cache', tier: 'free', keyId: record.id });
  const afterFirst = reads();
  for (let i = 0; i < 5; i++) assert.equal(cache.authenticate(header, now + i).ok, true);
  assert.equal(reads(), afterFirst, 'repeats read no key or user record');

  await setUserTier(base, 'usr_cache', 'pro', now);
  const upgraded = cache.authenticate(header, now);
  assert.equal(upgraded.ok && upgraded.tier, 'pro', 'a tier change applies to the next request');

  // Revocation by the CLI in another process.
  // Asynchronously, as a server keeps turning its event loop while an operator runs the CLI.
  await promisify(execFile)(process.execPath, [HPD, 'keys', 'revoke', record.id], { env: { ...process.env, HPD_STATE_DIR: dir } });
  assert.deepEqual(
    cache.authenticate(header, now),
    { ok: false, reason: 'invalid' },
    'revoked from another process: refused on the next request',
  );
  assert.deepEqual(cache.authenticate('Bearer nope', now), { ok: false, reason: 'invalid' });
});

test('cached credentials still record their last use, once a minute', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-authcache-'));
  const store = openLmdbStateStore(dir);
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const t0 = Date.parse('2026-11-20T12:00:00Z');
  const { plaintext, record } = await createKey(store, { tier: 'free', userId: 'usr_used', now: t0 });
  // Counts finished writes: a use is recorded by a write nobody awaits, and one still in flight
  // absorbs the next (at most one per key at a time).
  let written = 0;
  const counted = new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (prop !== 'updateKey' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: Parameters<typeof store.updateKey>) => store.updateKey(...args).finally(() => written++);
    },
  });
  const cache = new AuthCache(counted);
  cache.authenticate(`Bearer ${plaintext}`, t0);
  await eventually('the first use written', () => written === 1);
  assert.equal(store.getKey(record.id)!.last_used_at, new Date(t0).toISOString());
  cache.authenticate(`Bearer ${plaintext}`, t0 + 61_000);
  await eventually('a use a minute later written', () => written === 2);
  assert.equal(store.getKey(record.id)!.last_used_at, new Date(t0 + 61_000).toISOString());
});
