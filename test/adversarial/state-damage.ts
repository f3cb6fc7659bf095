/**
 * @module Random damage to a state file and what `hpd` makes of it, as real child processes: shared by
 * state-damage.test.ts (a few trials per file) and state-damage-run.ts (the measurement, 100 per file).
 *
 * One trial: a copy of a populated state directory (test/helpers/state-population.ts); 4–64 KiB of
 * random bytes over one of its files at a random offset past the two meta pages, within its length (the
 * meta pages and the length stay intact: what the file checks before mapping cannot see); then
 * `hpd state verify`, the content of every database read in a child of its own (to tell harmless damage
 * from harmful when verify says ok), `hpd keys create`, and optionally `hpd serve` (and, on `state.mdb`,
 * `hpd users list`). Everything follows from the seed, which every failure names.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { buildFixture } from '../helpers/fixture-build.ts';
import { freePorts } from '../helpers/services.ts';
import { populateState, seededRandom } from '../helpers/state-population.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HPD = join(ROOT, 'bin', 'hpd.js');
const HOOKS = join(ROOT, 'bin', 'register-typescript.js');
const DIGEST_CHILD = fileURLToPath(new URL('./state-digest-child.ts', import.meta.url));

export const STATE_FILES = ['state.mdb', 'oauth.mdb'] as const;
export type StateFileName = (typeof STATE_FILES)[number];

/** How a child process ended. */
export interface Ended {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number, readyOn?: RegExp): Promise<Ended & { ready: boolean }> {
  return new Promise((resolve, reject) => {
    const childEnv = { ...env };
    delete childEnv.NODE_TEST_CONTEXT;
    delete childEnv.HPD_DEBUG;
    const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let ready = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      if (readyOn !== undefined && !ready && readyOn.test(stdout)) {
        // Serving: that is all a trial asks of serve; it is stopped as an operator would.
        ready = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, ready });
    });
  });
}

/** `hpd ARGS` with `env`. */
export function hpd(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Ended> {
  return run([HPD, ...args], env, timeoutMs);
}

/** `hpd serve` until it says it serves (then SIGTERM) or exits; `ready` tells which. */
export function serveOnce(env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Ended & { ready: boolean }> {
  return run([HPD, 'serve'], env, timeoutMs, /MCP on /);
}

/**
 * The SHA-256 of every database's keys and values (test/helpers/lmdb-content-digest.ts), read in a child:
 * reading a damaged file may kill the reader. Null when it did not give one.
 */
export async function contentDigest(path: string): Promise<string | null> {
  const r = await run(['--import', HOOKS, DIGEST_CHILD, path], process.env, 60_000);
  const digest = r.stdout.trim();
  return r.status === 0 && r.signal === null && /^[0-9a-f]{64}$/.test(digest) ? digest : null;
}

export function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Where and how much a trial overwrote. */
export interface Damage {
  readonly offset: number;
  readonly length: number;
}

/** How many bytes a trial overwrites, at least and at most: 4–64 KiB unless a run asks otherwise. */
export interface DamageSize {
  readonly min: number;
  readonly max: number;
}

export const DEFAULT_DAMAGE: DamageSize = { min: 4096, max: 65_536 };

/** Overwrites `size` bytes of `path` past its two meta pages with random bytes from `seed`, within its length. */
export function damage(path: string, seed: number, size: DamageSize = DEFAULT_DAMAGE): Damage {
  const random = seededRandom(seed);
  const fileSize = statSync(path).size;
  const pageSize = 4096;
  const offset = 2 * pageSize + Math.floor(random() * (fileSize - 2 * pageSize));
  const length = Math.min(size.min + Math.floor(random() * (size.max - size.min + 1)), fileSize - offset);
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, length, offset);
  } finally {
    closeSync(fd);
  }
  return { offset, length };
}

/** A copy of the state files of `from` in a new directory `to` (without their lock files). */
export function copyState(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const file of STATE_FILES) copyFileSync(join(from, file), join(to, file));
}

/** What a command answered to a damaged file: success, a refusal in one line, or something else. */
export type Answer = 'ok' | 'refused' | `bad: ${string}`;

/** Exit 0, or exit 1 with exactly one line naming `file` as damaged; anything else is `bad`. */
export function judge(r: Ended, file: string): Answer {
  if (r.signal !== null) return `bad: killed by ${r.signal}`;
  if (/^\s+at /m.test(r.stderr)) return `bad: a stack trace: ${r.stderr.slice(0, 300)}`;
  if (r.status === 0) return 'ok';
  const lines = r.stderr.trim().split('\n');
  // The line quotes nothing of the damaged bytes: the paths here are ASCII, so every character is printable.
  if (r.status === 1 && lines.length === 1 && lines[0]!.includes(file) && lines[0]!.includes('damaged') && !/[^\x20-\x7e]/.test(lines[0]!))
    return 'refused';
  return `bad: exit ${r.status}: ${r.stderr.trim().slice(0, 300)}`;
}

/** One trial's outcome. */
export interface Trial {
  readonly seed: number;
  readonly file: StateFileName;
  readonly damage: Damage;
  readonly verify: Answer;
  readonly keysCreate: Answer;
  readonly serve: Answer | null;
  /** verify said ok and every record reads as before the damage. */
  readonly harmless: boolean;
  /** What verify said about the damaged file (its line on stderr), when it refused it. */
  readonly reason: string | null;
  /** What broke a rule; empty when the trial held. */
  readonly failures: readonly string[];
}

export interface TrialSetup {
  /** A populated state directory, never changed. */
  readonly pristine: string;
  /** Its content digest. */
  readonly digests: Readonly<Record<StateFileName, string>>;
  /** Where trial directories go. */
  readonly work: string;
  /** The environment for hpd (data directory, ports); HPD_STATE_DIR is set per trial. */
  readonly env: NodeJS.ProcessEnv;
  /** How much each trial overwrites (default {@link DEFAULT_DAMAGE}). */
  readonly damageSize?: DamageSize;
}

/**
 * Everything trials share, under `dir`: the fixture build, a populated state directory and its digests,
 * and hpd's environment on free ports.
 */
export async function prepareTrials(dir: string, damageSize?: DamageSize): Promise<TrialSetup> {
  const builds = await buildFixture(join(dir, 'fixture'));
  const pristine = join(dir, 'pristine');
  await populateState(pristine, 1);
  const [port, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
  const state = await contentDigest(join(pristine, 'state.mdb'));
  const oauth = await contentDigest(join(pristine, 'oauth.mdb'));
  assert.ok(state !== null && oauth !== null, 'the undamaged files read');
  return {
    pristine,
    digests: { 'state.mdb': state, 'oauth.mdb': oauth },
    work: join(dir, 'trials'),
    ...(damageSize === undefined ? {} : { damageSize }),
    env: {
      ...process.env,
      HPD_DATA_DIR: builds,
      HPD_PORT: String(port),
      HPD_MCP_PORT: String(mcpPort),
      HPD_AUTH_PORT: String(authPort),
      HPD_DRAIN_SECONDS: '0',
      HPD_WORKERS: '0',
    },
  };
}

export async function trial(setup: TrialSetup, file: StateFileName, seed: number, withServe: boolean): Promise<Trial> {
  const dir = join(setup.work, `${file}-${seed}`);
  copyState(setup.pristine, dir);
  const path = join(dir, file);
  const d = damage(path, seed, setup.damageSize);
  const damaged = fileHash(path);
  const env = { ...setup.env, HPD_STATE_DIR: dir };
  const failures: string[] = [];
  const verified = await hpd(['state', 'verify'], env);
  const verify = judge(verified, file);
  const after = fileHash(path);
  if (after !== damaged) failures.push('verify changed the file');
  // Tells damage that does no harm (in pages nothing reaches) from damage verify missed.
  const digest = await contentDigest(path);
  const harmless = digest === setup.digests[file];
  if (verify === 'ok' && !harmless)
    failures.push(`verify said ok, but ${digest === null ? 'the records cannot be read' : 'the records differ'}`);
  const keysCreate = judge(await hpd(['keys', 'create', '--tier', 'pro', '--label', 'after damage'], env), 'state.mdb');
  if (file === 'state.mdb') {
    if (keysCreate === 'refused' && fileHash(path) !== damaged) failures.push('keys create refused but changed the file');
    // The same check before the same open: the two never disagree.
    if (verify !== keysCreate) failures.push(`verify answered ${verify}, keys create ${keysCreate}`);
  } else if (keysCreate !== 'ok') failures.push(`keys create, which does not open ${file}, answered ${keysCreate}`);
  let serve: Answer | null = null;
  if (withServe && file === 'state.mdb') {
    // Every command opening the store has the same check before it: one of the users commands too.
    const users = judge(await hpd(['users', 'list'], env), file);
    if (users !== verify) failures.push(`verify answered ${verify}, users list ${users}`);
  }
  if (withServe) {
    const before = fileHash(path);
    const r = await serveOnce(env);
    serve = r.ready ? 'ok' : judge(r, file);
    if (serve === 'ok' && !r.ready) serve = 'bad: exited 0 without serving';
    if (serve === 'refused' && fileHash(path) !== before) failures.push('serve refused but changed the file');
    if (verify !== serve) failures.push(`verify answered ${verify}, serve ${serve}`);
  }
  for (const [what, answer] of [
    ['verify', verify],
    ['keys create', keysCreate],
    ['serve', serve],
  ] as const) {
    if (answer?.startsWith('bad') === true) failures.push(`${what}: ${answer}`);
  }
  const reason = verify === 'refused' ? verified.stderr.trim().replace(/^.*?: damaged: /, '') : null;
  return { seed, file, damage: d, verify, keysCreate, serve, harmless, reason, failures };
}

/** One line a failing trial is reproduced from. */
export function describeTrial(t: Trial): string {
  return `${t.file} seed ${t.seed} (${t.damage.length} bytes at ${t.damage.offset}): verify ${t.verify}, keys create ${t.keysCreate}${t.serve === null ? '' : `, serve ${t.serve}`}${t.failures.length === 0 ? '' : ` — ${t.failures.join('; ')}`}`;
}
