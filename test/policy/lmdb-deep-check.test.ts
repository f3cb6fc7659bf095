/**
 * The deep read of a state file (src/policy/lmdb-deep-check.ts) on sound files: it counts what each
 * database holds (big records on overflow pages included), passes a file that does not exist yet, and never takes a file that another process is
 * writing into for a damaged one (its child holds a read transaction while it walks the pages). Damage
 * itself: test/adversarial/state-damage.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { OAUTH_DATABASES, OAUTH_FILE, openOAuthStore } from '../../src/auth-server/lmdb-adapter.ts';
import { lmdbDeepCheck, plainReason } from '../../src/policy/lmdb-deep-check.ts';
import { lmdbFileProblem } from '../../src/policy/lmdb-file-check.ts';
import { openLmdbStateStore, STATE_DATABASES, STATE_FILE } from '../../src/policy/lmdb-store.ts';
import { populateState } from '../helpers/state-population.ts';

test('a sound file: every database counted; an absent one passes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-deep-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(await lmdbDeepCheck(join(dir, STATE_FILE), STATE_DATABASES), null);
  await populateState(dir, 3, { users: 30, keysPerUser: 2, clients: 5, grants: 20 });
  const state = await lmdbDeepCheck(join(dir, STATE_FILE), STATE_DATABASES);
  assert.deepEqual(state, { databases: { counters: 60, keys: 60, 'keys-by-hash': 60, meta: 1, users: 30 } });
  const oauth = await lmdbDeepCheck(join(dir, OAUTH_FILE), OAUTH_DATABASES);
  assert.ok(oauth !== null && 'databases' in oauth, JSON.stringify(oauth));
  assert.ok((oauth.databases.records ?? 0) > 20 && (oauth.databases.indexes ?? 0) > 20, JSON.stringify(oauth));
});

test('records too big for a page, on overflow pages, some deleted since, are read as sound', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-deep-check-big-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, OAUTH_FILE);
  const oauth = openOAuthStore(path);
  const clients = oauth.adapterFor('Client');
  for (let i = 0; i < 12; i++)
    await clients.upsert(
      `client${i}`,
      { client_id: `client${i}`, redirect_uris: Array.from({ length: 50 + 40 * i }, (_, j) => `https://app${j}.example.com/cb`) },
      undefined,
    );
  for (let i = 0; i < 12; i += 3) await clients.destroy(`client${i}`);
  await oauth.close();
  assert.deepEqual(await lmdbDeepCheck(path, OAUTH_DATABASES), { databases: { indexes: 0, records: 8 } });
});

test('a file another process is writing into is never taken for a damaged one', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-deep-check-live-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await populateState(dir, 4, { users: 40, keysPerUser: 2, clients: 1, grants: 1 });
  const store = openLmdbStateStore(dir);
  let writing = true;
  let writes = 0;
  // Every commit frees pages and reuses freed ones: what a check reading without a snapshot would trip on.
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      await store.putUser({
        id: `usr_live${i % 300}`,
        tier: 'pro',
        created_at: '2026-11-26T00:00:00.000Z',
        updated_at: `2026-11-26T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
      });
      await store.saveCounters('2026-11-26', new Map([[`usr_live${i % 300}`, i]]));
      writes++;
    }
  })();
  try {
    for (let i = 0; i < 8; i++) {
      const check = await lmdbDeepCheck(join(dir, STATE_FILE), STATE_DATABASES);
      assert.ok(check !== null && 'databases' in check, `check ${i} after ${writes} writes: ${JSON.stringify(check)}`);
    }
  } finally {
    writing = false;
    await writer;
    await store.close();
  }
  assert.ok(writes > 8, `the writer kept committing meanwhile (${writes} commits)`);
});

test('records holding lone surrogates, which never encode to the same bytes again, are read as sound', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-deep-check-surrogates-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, OAUTH_FILE);
  const oauth = openOAuthStore(path);
  // What a dynamic registration may carry: JSON's "\ud800" is a lone surrogate.
  const names = ['\ud800', 'a\udfffb', `${'x'.repeat(40)}\ud83d`, `${'\ufffd'.repeat(3)}\udc00${'y'.repeat(300)}`];
  for (const [i, name] of names.entries())
    await oauth.adapterFor('Client').upsert(`client${i}`, { client_id: `client${i}`, client_name: name }, undefined);
  await oauth.close();
  assert.deepEqual(await lmdbDeepCheck(path, OAUTH_DATABASES), { databases: { indexes: 0, records: names.length } });
});

test('files written by this version of the stores stay sound: an lmdb or msgpackr upgrade must read them so', async (t) => {
  // test/fixtures/state-files: test/helpers/state-population.ts, seed 5, 8 users with 2 keys each, 10
  // clients (one on overflow pages), 8 grants, gzipped. The deep read encodes every value again and
  // compares the bytes, so an upgrade that encodes a value otherwise would make every existing file look
  // damaged and stop hpd serve: this test fails first.
  const dir = mkdtempSync(join(tmpdir(), 'hpd-deep-check-fixture-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fixtures = new URL('../fixtures/state-files/', import.meta.url);
  for (const file of [STATE_FILE, OAUTH_FILE]) writeFileSync(join(dir, file), gunzipSync(readFileSync(new URL(`${file}.gz`, fixtures))));
  assert.deepEqual(await lmdbDeepCheck(join(dir, STATE_FILE), STATE_DATABASES), {
    databases: { counters: 16, keys: 16, 'keys-by-hash': 16, meta: 1, users: 8 },
  });
  const oauth = await lmdbDeepCheck(join(dir, OAUTH_FILE), OAUTH_DATABASES);
  assert.ok(oauth !== null && 'databases' in oauth && (oauth.databases.records ?? 0) > 30, JSON.stringify(oauth));
});

test("a reader's error becomes words fit for one line: no quoted content, no control or non-ASCII characters", () => {
  assert.equal(
    plainReason('Data read, but end of buffer not reached {"hash":"9f\u0000\n\u00e9"}'),
    'Data read, but end of buffer not reached',
  );
  assert.equal(plainReason('MDB_PAGE_NOTFOUND: Requested page not found'), 'MDB_PAGE_NOTFOUND: Requested page not found');
  assert.equal(plainReason('Unknown extension type 12\r\nnext'), 'Unknown extension type 12??next');
  assert.equal(plainReason(`x${'y'.repeat(300)}`).length, 120);
});

test('a store another process is creating, empty or short for a moment, is not taken for a damaged one', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-file-check-creating-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sound = join(dir, 'sound');
  await populateState(sound, 5, { users: 3, keysPerUser: 1, clients: 0, grants: 0 });
  const bytes = join(sound, STATE_FILE);
  const creating = join(dir, STATE_FILE);
  // The creator makes the file empty, says so, and writes it whole a moment later, as LMDB does.
  const script = `const fs = require('node:fs');
    fs.writeFileSync(process.argv[1], '');
    process.stdout.write('created\\n');
    setTimeout(() => { fs.writeFileSync(process.argv[1], fs.readFileSync(process.argv[2])); }, 150);`;
  const child = spawn(process.execPath, ['-e', script, creating, bytes], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((r) => child.on('exit', r));
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  assert.equal(lmdbFileProblem(creating), null);
  await exited;
  // A file at rest that is empty stays refused.
  writeFileSync(creating, '');
  assert.match(lmdbFileProblem(creating) ?? '', /empty/);
});
