/**
 * @module Whether an LMDB file of the state directory may be opened: its meta pages (lmdb-file-check.ts),
 * then every page and record of it, read by a child process (lmdb-deep-read.ts).
 *
 * Damage inside the file (a disk, a copy or a stray write over some pages) leaves the meta pages and the
 * file's length as they were, and LMDB trusts every page it is led to: a reading process dies on SIGBUS
 * or SIGSEGV, or throws MDB_PAGE_NOTFOUND, and a writing one (`hpd keys create`) can spread the damage
 * into the pages it writes. So every command that opens the file, and `hpd serve`, has it read in a child
 * first: a signal, an exit or garbage on its stdout is the damage, said in one line, and the file is not
 * opened. One child per file, the files of one command at once; its cost is a Node start (~0.1–0.2 s)
 * plus a read of every page and value: ~0.5 s for a state.mdb of 10,000 keys on an idle core
 * (bench/state-check.bench.ts).
 *
 * Pages LMDB no longer references (its free pages) are not read: nothing reads them, and LMDB overwrites
 * them whole when it reuses them; `hpd state backup` (a compacting copy) leaves them out.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { damagedStateFile, lmdbFileProblem } from './lmdb-file-check.ts';
import { StateError } from './state-error.ts';

const HOOKS = new URL('../../bin/register-typescript.js', import.meta.url).href;
const READER = fileURLToPath(new URL('./lmdb-deep-read.ts', import.meta.url));
/** Far longer than reading any state file takes; a reader looping on garbage pages is stopped at it. */
const READ_TIMEOUT_MS = 120_000;

/** The named databases a file may hold and how each encodes its values (lmdb-js's own names). */
export type DatabaseSpec = Readonly<Record<string, 'msgpack' | 'binary'>>;

/**
 * The child's one line: the entries of each database, why the file is damaged, or why it could not be
 * read (a writer committing all the time), which says nothing about the file.
 */
export type DeepReadVerdict =
  | { readonly databases: Readonly<Record<string, number>> }
  | { readonly damage: string }
  | { readonly unread: string };

/** A sound file's entries per database, or why it is damaged. */
export type DeepCheck = { readonly databases: Readonly<Record<string, number>> } | { readonly problem: string };

/**
 * An error's words fit for the one line a command ends with: decoders quote what they decoded from the
 * damaged bytes (garbage, or a record's content), so the message stops before its first quotation, and
 * control and non-ASCII characters go.
 */
export function plainReason(message: string): string {
  const quoted = message.search(/ ["{[]/);
  const words = (quoted === -1 ? message : message.slice(0, quoted)).replace(/[^\x20-\x7e]/g, '?').trim();
  return words.length > 120 ? `${words.slice(0, 117)}...` : words;
}

/** A check that could not be made, for a reason that is not the file's. */
function unchecked(path: string, why: string): StateError {
  return new StateError(`the state file ${path} could not be checked (${why}); it was not opened: try again`);
}

/** The child's verdict on `path`, whatever way it ended; rejects with a StateError when there is none. */
function readInChild(path: string, spec: DatabaseSpec): Promise<DeepCheck> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--import', HOOKS, READER, path, JSON.stringify(spec)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, READ_TIMEOUT_MS);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(unchecked(path, `its reader could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // A reader going round in circles on garbage pages; reading a sound file takes seconds at most.
      if (timedOut) return resolve({ problem: `reading it did not finish within ${READ_TIMEOUT_MS / 1000} s` });
      if (signal !== null) return resolve({ problem: `reading it killed the reader (${signal})` });
      const said = plainReason(err.trim().split('\n').at(-1) ?? '');
      if (code !== 0) return resolve({ problem: `reading it failed (exit ${code}${said === '' ? '' : `: ${said}`})` });
      let verdict: DeepReadVerdict;
      try {
        verdict = JSON.parse(out) as DeepReadVerdict;
      } catch {
        return resolve({ problem: 'reading it gave no verdict' });
      }
      if ('unread' in verdict) return reject(unchecked(path, verdict.unread));
      resolve('damage' in verdict ? { problem: plainReason(verdict.damage) } : { databases: verdict.databases });
    });
  });
}

/**
 * The meta pages, then every page and record; a file that does not exist yet passes (the store creates
 * it). Never maps the file in this process.
 */
export async function lmdbDeepCheck(path: string, spec: DatabaseSpec): Promise<DeepCheck | null> {
  if (!existsSync(path)) return null;
  const problem = lmdbFileProblem(path);
  if (problem !== null) return { problem };
  return readInChild(path, spec);
}

/** Throws {@link damagedStateFile} unless each of `files` is absent or sound; the files are read in parallel. */
export async function assertLmdbFilesSound(files: ReadonlyArray<{ readonly path: string; readonly spec: DatabaseSpec }>): Promise<void> {
  const checks = await Promise.all(files.map(({ path, spec }) => lmdbDeepCheck(path, spec)));
  files.forEach(({ path }, i) => {
    const check = checks[i];
    if (check !== null && check !== undefined && 'problem' in check) throw damagedStateFile(path, check.problem);
  });
}
