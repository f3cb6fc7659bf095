/**
 * @module Atomic publication of builds.
 *
 * A build is written into a temporary directory beside its final place, verified by opening it, then
 * renamed; the `current` pointer of the year is a symlink replaced by rename(2). Both renames are
 * atomic on one filesystem, so a reader sees the old build or the new one, never a mixture, and a
 * failed or interrupted build leaves the previous build serving and no partial directory behind.
 *
 * A published `<year>/<hash>` directory is never deleted or written in place: a running server may map
 * it, and a kill between "delete" and "rename" used to leave `current` pointing at nothing. When the
 * hash already exists, an intact copy is kept and `current` merely re-pointed; a damaged one is renamed
 * aside (`.corrupt-…`, removed by a later build like stale temporary directories) and the new build
 * takes its name. At every instant `current` names a complete, verified directory (the previous build,
 * the staged new one, or the published new one): see {@link publishBuild}.
 */
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { BuildIntegrityError, checkBuild } from '../src/engine/build-integrity.ts';
import { CURRENT_LINK, currentHash, LMDB_FILE } from '../src/engine/build-format.ts';

// Where `current` points is read by the server too: the function lives with the build layout.
export { CURRENT_LINK, currentHash };

const TMP_PREFIX = '.tmp-';
const CORRUPT_PREFIX = '.corrupt-';

/** Temporary directories of builds running in this process; a signal handler removes them. */
const active = new Set<string>();

export function yearDir(buildsRoot: string, year: number): string {
  return join(buildsRoot, String(year));
}

/** Creates a fresh temporary directory for a build and registers it for cleanup. */
export function createTmpBuildDir(buildsRoot: string, year: number, hash: string, tag = ''): string {
  const dir = join(yearDir(buildsRoot, year), `${TMP_PREFIX}${hash.slice(0, 16)}-${process.pid}-${Date.now()}${tag}`);
  mkdirSync(dir, { recursive: true });
  active.add(dir);
  return dir;
}

export function discardTmpBuildDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  active.delete(dir);
}

/** Removes every temporary directory of this process: called from the SIGINT/SIGTERM handler. */
export function discardAllActive(): void {
  for (const dir of active) rmSync(dir, { recursive: true, force: true });
  active.clear();
}

/**
 * Removes temporary directories left by builds whose process is gone (killed with SIGKILL, power loss)
 * and damaged builds moved aside. Never the directory `current` points at: a build killed while
 * replacing a damaged build may have left `current` on its staged (complete, verified) directory.
 * With `dryRun` it only names what it would remove (`hpd builds prune --dry-run`).
 */
export function removeStaleTmpDirs(buildsRoot: string, year: number, dryRun = false): string[] {
  const dir = yearDir(buildsRoot, year);
  if (!existsSync(dir)) return [];
  const current = currentHash(buildsRoot, year);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const link = /^current\.(\d+)\.tmp$/.exec(name); // a symlink a killed switchCurrent left behind
    if (link !== null && !isAlive(Number(link[1]))) {
      if (!dryRun) rmSync(join(dir, name), { force: true });
      removed.push(name);
      continue;
    }
    const prefix = name.startsWith(TMP_PREFIX) ? TMP_PREFIX : name.startsWith(CORRUPT_PREFIX) ? CORRUPT_PREFIX : null;
    if (prefix === null || name === current) continue;
    const pid = Number(name.slice(prefix.length).split('-')[1]);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue;
    if (pid === process.pid && active.has(join(dir, name))) continue;
    if (!dryRun) rmSync(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Steps of {@link publishBuild}, reported to {@link PublishHooks.afterStep} (tests kill the process there). */
export type PublishStep =
  | 'synced'
  | 'current-on-staging'
  | 'damaged-moved-aside'
  | 'linked'
  | 'renamed'
  | 'current-switched'
  | 'staging-removed';

export interface PublishHooks {
  /** Called after each step; the kill-during-publication test pauses here and SIGKILLs the process. */
  readonly afterStep?: (step: PublishStep) => void;
}

export interface PublishOutcome {
  /** The published directory `<year>/<hash>`. */
  readonly dir: string;
  /** `new`: first build of this hash; `kept`: an intact identical build existed and stays; `replaced`: a damaged one was moved aside. */
  readonly action: 'new' | 'kept' | 'replaced';
  /** Why the existing directory was replaced (one line), when it was. */
  readonly damage: string | null;
}

/**
 * Publishes a verified temporary build as `<year>/<hash>` and points `current` at it.
 *
 * Kill-safety, step by step (`current` is only ever changed by an atomic symlink rename):
 * - new hash: rename tmp → hash (current still on the previous build), switch current;
 * - hash exists and verifies: leave it untouched, switch current, drop the tmp build;
 * - hash exists but is damaged: if current names it, point current at the staged tmp build first (it is
 *   complete and verified, and removed from the signal cleanup so nothing deletes it under current);
 *   rename the damaged directory aside; hard-link the staged files into a second tmp directory and rename
 *   that to the hash (the staged directory must keep existing while current names it, so it cannot be
 *   renamed itself); switch current; remove the staged directory.
 * Everything here is synchronous, so the SIGINT/SIGTERM handler (which deletes this process's temporary
 * directories) never runs between two steps; only SIGKILL or a power loss can stop it mid-way.
 */
export function publishBuild(
  tmpDir: string,
  buildsRoot: string,
  year: number,
  hash: string,
  hooks: PublishHooks = {},
  makeCurrent = true,
): PublishOutcome {
  const step = hooks.afterStep ?? ((): void => undefined);
  // Without makeCurrent (`hpd build --no-switch`) the build is published beside the current one, for
  // `hpd builds diff` before `hpd builds use`; current only moves when it names a damaged copy.
  const point = (): void => {
    if (makeCurrent) switchCurrent(buildsRoot, year, hash);
  };
  const yd = yearDir(buildsRoot, year);
  const final = join(yd, hash);
  // SIGKILL keeps the page cache, but a power loss would not: the files and directory entries reach the
  // disk before anything points at them.
  syncTree(tmpDir);
  step('synced');

  if (!existsSync(final)) {
    renameSync(tmpDir, final);
    active.delete(tmpDir);
    syncPath(yd);
    step('renamed');
    point();
    step('current-switched');
    return { dir: final, action: 'new', damage: null };
  }

  let damage: string | null = null;
  try {
    const existing = checkBuild(final, { checksums: true, expectedHash: hash });
    if (existing.legacy !== null) damage = existing.legacy;
  } catch (err) {
    if (!(err instanceof BuildIntegrityError)) throw err;
    damage = err.message;
  }
  if (damage === null) {
    if (currentHash(buildsRoot, year) !== hash) point();
    step('current-switched');
    discardTmpBuildDir(tmpDir);
    step('staging-removed');
    return { dir: final, action: 'kept', damage: null };
  }

  const currentWasDamaged = currentHash(buildsRoot, year) === hash;
  if (currentWasDamaged) {
    active.delete(tmpDir);
    switchCurrent(buildsRoot, year, basename(tmpDir));
    step('current-on-staging');
  }
  renameSync(final, join(yd, `${CORRUPT_PREFIX}${hash.slice(0, 16)}-${process.pid}-${Date.now()}`));
  step('damaged-moved-aside');
  const linked = createTmpBuildDir(buildsRoot, year, hash, '-link');
  for (const name of readdirSync(tmpDir)) {
    // The lock file belongs to whoever opened the staged copy (the verification); readers make their own.
    if (name === `${LMDB_FILE}-lock`) continue;
    try {
      linkSync(join(tmpDir, name), join(linked, name));
    } catch {
      copyFileSync(join(tmpDir, name), join(linked, name)); // a filesystem without hard links
    }
  }
  syncPath(linked);
  step('linked');
  renameSync(linked, final);
  active.delete(linked);
  syncPath(yd);
  step('renamed');
  if (currentWasDamaged) switchCurrent(buildsRoot, year, hash);
  else point();
  step('current-switched');
  discardTmpBuildDir(tmpDir);
  step('staging-removed');
  return { dir: final, action: 'replaced', damage };
}

/** Points `<year>/current` at `target` (a directory name in the year directory) atomically. */
export function switchCurrent(buildsRoot: string, year: number, target: string): void {
  const dir = yearDir(buildsRoot, year);
  const tmpLink = join(dir, `${CURRENT_LINK}.${process.pid}.tmp`);
  rmSync(tmpLink, { force: true });
  symlinkSync(target, tmpLink, 'dir');
  renameSync(tmpLink, join(dir, CURRENT_LINK));
  syncPath(dir);
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncTree(dir: string): void {
  for (const name of readdirSync(dir)) if (lstatSync(join(dir, name)).isFile()) syncPath(join(dir, name));
  syncPath(dir);
}
