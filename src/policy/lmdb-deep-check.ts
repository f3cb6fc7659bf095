/**
 * @module Whether an LMDB file of the state directory may be opened: its meta pages (lmdb-file-check.ts),
 * then every page and record of it, read by a child process (lmdb-deep-read.ts).
 *
 * Damage inside the file (a disk, a copy or a stray write over some pages) leaves the meta pages and the
 * file's length as they were, and LMDB trusts every page it is led to: a reading process dies on SIGBUS
 * or SIGSEGV, or throws MDB_PAGE_NOTFOUND, and a writing one (`hpd keys create`) can spread the damage
 * into the pages it writes. So every command that opens the file, and `hpd serve`, has it read in a child
 * first: a signal, an exit or garbage on its stdout is the damage, said in one line, and the file is not
 * opened. One child per file; its cost is a Node start plus a read of every page (README: a few hundred
 * milliseconds for a realistic file).
 *
 * Pages LMDB no longer references (its free pages) are not read: nothing reads them, and LMDB overwrites
 * them whole when it reuses them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { damagedStateFile, lmdbFileProblem } from './lmdb-file-check.ts';

const HOOKS = new URL('../../bin/register-typescript.js', import.meta.url).href;
const READER = fileURLToPath(new URL('./lmdb-deep-read.ts', import.meta.url));
/** Far longer than reading any state file takes; a reader looping on a damaged page is stopped at it. */
const READ_TIMEOUT_MS = 120_000;

/** The named databases a file may hold and how each encodes its values (lmdb-js's own names). */
export type DatabaseSpec = Readonly<Record<string, 'msgpack' | 'binary'>>;

/** The child's one line: the entries of each database, or why the file is damaged. */
export type DeepReadVerdict = { readonly databases: Readonly<Record<string, number>> } | { readonly damage: string };

/** A sound file's entries per database, or why it is damaged. */
export type DeepCheck = { readonly databases: Readonly<Record<string, number>> } | { readonly problem: string };

/** The child's verdict on `path`, whatever way it ended. */
function readInChild(path: string, spec: DatabaseSpec): Promise<DeepCheck> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--import', HOOKS, READER, path, JSON.stringify(spec)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: READ_TIMEOUT_MS,
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.on('error', (e) => resolve({ problem: `its reader could not start (${e.message})` }));
    child.on('close', (code, signal) => {
      if (signal !== null) return resolve({ problem: `reading it killed the reader (${signal})` });
      const said = err.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return resolve({ problem: `reading it failed (exit ${code}${said === '' ? '' : `: ${said}`})` });
      let verdict: DeepReadVerdict;
      try {
        verdict = JSON.parse(out) as DeepReadVerdict;
      } catch {
        return resolve({ problem: 'reading it gave no verdict' });
      }
      resolve('damage' in verdict ? { problem: verdict.damage } : { databases: verdict.databases });
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
