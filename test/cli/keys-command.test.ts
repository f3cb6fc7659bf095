/**
 * End-to-end tests of `hpd keys` and `hpd users`: the real CLI (bin/hpd.js) runs as a child process on
 * a temporary HPD_STATE_DIR while this process keeps the same store open, as a running server would,
 * and checks that the CLI's writes change what `authenticate` returns on the next call.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey, hashKey, revokeKey } from '../../src/policy/api-keys.ts';
import { authenticate } from '../../src/policy/authenticate.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { StateStore } from '../../src/policy/state-store.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(ROOT, 'bin', 'hpd.js');

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Harness {
  stateDir: string;
  hpd(...args: string[]): Promise<RunResult>;
  /** The store as the server would hold it: opened once, never reopened. */
  store(): StateStore;
}

function harness(t: TestContext): Harness {
  const stateDir = mkdtempSync(join(tmpdir(), 'hpd-cli-state-'));
  let store: StateStore | undefined;
  t.after(async () => {
    await store?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  return {
    stateDir,
    hpd(...args) {
      const env: NodeJS.ProcessEnv = { ...process.env, HPD_STATE_DIR: stateDir };
      delete env.HPD_DEBUG;
      const child = spawn(process.execPath, [HPD, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
      child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      return new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    },
    store() {
      store ??= openLmdbStateStore(stateDir);
      return store;
    },
  };
}

test('keys create prints only the key on stdout; list shows it without secrets; revoke applies to the next request', async (t) => {
  const h = harness(t);
  const store = h.store();
  const created = await h.hpd('keys', 'create', '--tier', 'pro', '--label', 'x');
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^hpd_[0-9a-f]{40}\n$/);
  const plaintext = created.stdout.trim();
  const keyId = /\b(key_[0-9a-f]{16})\b/.exec(created.stderr)?.[1];
  const userId = /\b(usr_[0-9a-f]{16})\b/.exec(created.stderr)?.[1];
  assert.ok(keyId !== undefined && userId !== undefined, created.stderr);

  const auth = authenticate(`Bearer ${plaintext}`, store, Date.now());
  assert.deepEqual(auth, { ok: true, userId, tier: 'pro', keyId });

  const listed = await h.hpd('keys', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 1);
  const [id, user, label, createdAt, lastUsed, revoked] = lines[0].split('\t');
  assert.deepEqual([id, user, label, revoked], [keyId, userId, 'x', '-']);
  assert.match(createdAt, /^\d{4}-\d\d-\d\dT/);
  assert.ok(lastUsed === '-' || /^\d{4}-/.test(lastUsed));
  const json = await h.hpd('keys', 'list', '--json');
  const records = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(
    records.map((r) => [r.id, r.user_id, r.label, r.tier_at_creation, r.revoked_at]),
    [[keyId, userId, 'x', 'pro', null]],
  );
  for (const out of [listed.stdout, json.stdout]) {
    assert.ok(!out.includes(plaintext.slice(4)), 'no plaintext');
    assert.ok(!out.includes(hashKey(plaintext)), 'no hash');
  }

  const revoked1 = await h.hpd('keys', 'revoke', keyId);
  assert.equal(revoked1.code, 0, revoked1.stderr);
  assert.equal(revoked1.stdout, '');
  assert.deepEqual(authenticate(`Bearer ${plaintext}`, store, Date.now()), { ok: false, reason: 'invalid' });
  const after = await h.hpd('keys', 'list');
  assert.match(after.stdout.split('\t')[5], /^\d{4}-\d\d-\d\dT/);
});

test('a bad tier is a usage error: exit 2, one line naming the valid tiers, nothing on stdout', async (t) => {
  const h = harness(t);
  const r = await h.hpd('keys', 'create', '--tier', 'gold');
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /gold.*free, pro, enterprise/);
  const u = await h.hpd('users', 'set-tier', 'usr_1', 'platinum');
  assert.equal(u.code, 2);
  assert.equal(u.stderr.trimEnd().split('\n').length, 1, u.stderr);
});

test('other mistakes: missing --tier and revoking by key are usage errors; an unknown key id fails with one line', async (t) => {
  const h = harness(t);
  const [noTier, byKey, unknown, noSub] = await Promise.all([
    h.hpd('keys', 'create'),
    h.hpd('keys', 'revoke', `hpd_${'0'.repeat(40)}`),
    h.hpd('keys', 'revoke', 'key_ffffffffffffffff'),
    h.hpd('keys', 'rotate'),
  ]);
  assert.equal(noTier.code, 2, noTier.stderr);
  assert.match(noTier.stderr, /--tier/);
  assert.equal(byKey.code, 2, byKey.stderr);
  assert.match(byKey.stderr, /key id/);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^hpd: no API key key_ffffffffffffffff \(see hpd keys list\)$/m);
  assert.doesNotMatch(unknown.stderr, /unexpected/);
  assert.equal(unknown.stderr.trimEnd().split('\n').length, 1);
  assert.equal(noSub.code, 2);
});

test('users set-tier changes the tier authenticate returns for an already open store, and creates users', async (t) => {
  const h = harness(t);
  const store = h.store();
  const created = await h.hpd('keys', 'create', '--tier', 'free', '--user', 'acct-7');
  assert.equal(created.code, 0, created.stderr);
  const header = `Bearer ${created.stdout.trim()}`;
  const tier = (): unknown => {
    const r = authenticate(header, store, Date.now());
    return r.ok ? r.tier : r.reason;
  };
  assert.equal(tier(), 'free');

  const up = await h.hpd('users', 'set-tier', 'acct-7', 'enterprise');
  assert.equal(up.code, 0, up.stderr);
  assert.match(up.stderr, /free to enterprise/);
  assert.equal(tier(), 'enterprise');

  const fresh = await h.hpd('users', 'set-tier', 'acct-8', 'pro');
  assert.equal(fresh.code, 0, fresh.stderr);
  const users = await h.hpd('users', 'list');
  assert.deepEqual(
    users.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 2)),
    [
      ['acct-7', 'enterprise'],
      ['acct-8', 'pro'],
    ],
  );
});

test('keys purge deletes only keys revoked before the date, frees their pages for reuse, and refuses a bad date', {
  timeout: 120_000,
}, async (t) => {
  const h = harness(t);
  const store = h.store();
  // One owner: keys come and go, their user stays (a new user per key would grow the file by itself).
  const OWNER = 'usr_purge';
  const past = Date.parse('2026-01-01T00:00:00Z');
  const created = await Promise.all(Array.from({ length: 400 }, () => createKey(store, { tier: 'free', userId: OWNER, now: past })));
  for (const k of created.slice(0, 300)) await revokeKey(store, k.record.id, past + 3_600_000);
  const live = created.at(-1)!;
  const file = join(h.stateDir, 'state.mdb');

  for (const bad of ['yesterday', '2026-13-01', '2999-01-01']) {
    const r = await h.hpd('keys', 'purge', '--revoked-before', bad);
    assert.equal(r.code, 2, bad);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const none = await h.hpd('keys', 'purge', '--revoked-before', '2026-01-01');
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /^purged 0 keys revoked before 2026-01-01T00:00:00.000Z\n$/);

  const r = await h.hpd('keys', 'purge', '--revoked-before', '2026-01-02');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.stdout.trim().split('\n').sort(),
    created
      .slice(0, 300)
      .map((k) => k.record.id)
      .sort(),
  );
  assert.deepEqual(
    store
      .listKeys()
      .map((k) => k.id)
      .sort(),
    created
      .slice(300)
      .map((k) => k.record.id)
      .sort(),
  );
  assert.equal(store.getKeyByHash(hashKey(created[0]!.plaintext)), undefined);
  assert.equal(authenticate(`Bearer ${live.plaintext}`, store, Date.now()).ok, true);

  // The pages the purge freed take as many new keys again without growing the file.
  const size = statSync(file).size;
  for (let i = 0; i < 300; i++) await createKey(store, { tier: 'free', userId: OWNER, now: Date.now() });
  assert.equal(statSync(file).size, size, 'new keys reuse the freed pages');
});

test('hpd --help lists keys and users; hpd keys --help exits 0', async (t) => {
  const h = harness(t);
  const [top, keys, users] = await Promise.all([h.hpd('--help'), h.hpd('keys', '--help'), h.hpd('users', '--help')]);
  assert.match(top.stdout, /^\s+keys\s/m);
  assert.match(top.stdout, /^\s+users\s/m);
  assert.equal(keys.code, 0);
  assert.match(keys.stdout, /create --tier/);
  assert.equal(users.code, 0);
  assert.match(users.stdout, /set-tier/);
});
