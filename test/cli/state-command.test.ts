/**
 * The state files that hold customers' keys and grants are at least as safe as the build files: real
 * LMDB files, written by real `hpd` processes, then truncated, emptied or
 * overwritten. Before the check, `hpd keys list` on a truncated `state.mdb` died on SIGBUS with no
 * message, `hpd serve` on a truncated `oauth.mdb` likewise, and a 0-byte `state.mdb` was recreated
 * empty (every key then answered 401). Now each refuses with one line naming the file, exit 1, and
 * leaves the file as it was; `hpd state verify` and `hpd state backup` find and avoid the damage.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OAUTH_FILE, openOAuthStore } from '../../src/auth-server/lmdb-adapter.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { freePorts } from '../helpers/services.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(root, 'bin', 'hpd.js');

let dir: string;
let builds: string;
/** Ports for `hpd serve` (REST, MCP, authorization server): the issuer must name a real one. */
let ports: number[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-state-cmd-'));
  builds = await buildFixture(join(dir, 'fixture'));
  ports = (await freePorts(3)) as number[];
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function hpd(state: string, ...args: string[]): Run {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HPD_STATE_DIR: state,
    HPD_DATA_DIR: builds,
    HPD_PORT: String(ports[0]),
    HPD_MCP_PORT: String(ports[1]),
    HPD_AUTH_PORT: String(ports[2]),
  };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [HPD, ...args], { env, cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** A state directory with one key, written by `hpd keys create`, and a sound oauth.mdb beside it. */
function populated(name: string): { state: string; key: string } {
  const state = join(dir, name);
  const made = hpd(state, 'keys', 'create', '--tier', 'pro', '--label', name);
  assert.equal(made.status, 0, made.stderr);
  const verified = hpd(state, 'state', 'verify');
  assert.equal(verified.status, 0, verified.stderr);
  return { state, key: made.stdout.trim() };
}

/** Exit 1 with exactly one line on stderr naming the file, never a signal. */
function refused(r: Run, file: string): string {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.ok(lines[0]!.includes(file), lines[0]);
  assert.match(lines[0]!, /is damaged \(/);
  return lines[0]!;
}

test('verify reads every record; backup writes verified, owner-only copies and never overwrites', () => {
  const { state } = populated('sound');
  const v = hpd(state, 'state', 'verify');
  assert.match(v.stdout, /state\.mdb: ok \(keys 1, keys-by-hash 1, users 1, counters \d+, meta \d+\)/);
  const to = join(dir, 'backup-sound');
  const b = hpd(state, 'state', 'backup', to);
  assert.equal(b.status, 0, b.stderr);
  assert.match(b.stdout, /backup-sound\/state\.mdb: ok \(keys 1,/);
  assert.equal(statSync(join(to, 'state.mdb')).mode & 0o777, 0o600);
  const again = hpd(state, 'state', 'backup', to);
  assert.equal(again.status, 2, 'a backup never overwrites');
  assert.match(again.stderr, /is not empty/);
});

test('a truncated state.mdb: every command refuses it with one line, none dies on SIGBUS; a restored backup works', () => {
  const { state } = populated('truncated');
  const to = join(dir, 'backup-truncated');
  assert.equal(hpd(state, 'state', 'backup', to).status, 0);
  const file = join(state, 'state.mdb');
  truncateSync(file, 8192); // the two meta pages survive; the data pages they point at do not
  const line = refused(hpd(state, 'keys', 'list'), file);
  assert.match(line, /truncated: 8192 bytes, but its last page ends at byte \d+/);
  refused(hpd(state, 'serve'), file);
  const v = hpd(state, 'state', 'verify');
  assert.equal(v.status, 1);
  assert.match(v.stderr, /state\.mdb: damaged: it is truncated/);
  assert.equal(statSync(file).size, 8192, 'the damaged file is left as it was');
  // Restoring, as the README says: copy the backup back with hpd stopped.
  copyFileSync(join(to, 'state.mdb'), file);
  const listed = hpd(state, 'keys', 'list');
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /\ttruncated\t/);
});

test('a 0-byte state.mdb is refused, never recreated empty', () => {
  const { state } = populated('empty');
  const file = join(state, 'state.mdb');
  truncateSync(file, 0);
  assert.match(refused(hpd(state, 'keys', 'list'), file), /it is empty \(0 bytes\)/);
  assert.equal(statSync(file).size, 0, 'not replaced by an empty store');
});

test('overwritten meta pages are refused before LMDB maps them', () => {
  const { state } = populated('meta');
  const file = join(state, 'state.mdb');
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(8192, 0x5a), 0, 8192, 0);
  closeSync(fd);
  assert.match(refused(hpd(state, 'keys', 'list'), file), /lacks the LMDB magic number/);
});

test('a truncated oauth.mdb stops hpd serve with one line naming it', async () => {
  const { state } = populated('oauth');
  const file = join(state, OAUTH_FILE);
  // The authorization server's store, as it creates it at its first start.
  await openOAuthStore(file).close();
  assert.ok(statSync(file).size > 8192, `oauth.mdb holds more than its meta pages (${statSync(file).size} bytes)`);
  truncateSync(file, 8192);
  refused(hpd(state, 'serve'), file);
});
