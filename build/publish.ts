/**
 * @module Atomic publication of builds.
 *
 * A build is written into a temporary directory beside its final place, verified by opening it, then
 * renamed; the `current` pointer of the year is a symlink replaced by rename(2). Both renames are
 * atomic on one filesystem, so a reader sees the old build or the new one, never a mixture, and a
 * failed or interrupted build leaves the previous build serving and no partial directory behind.
 */
import { existsSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

export const CURRENT_LINK = 'current';
const TMP_PREFIX = '.tmp-';

/** Temporary directories of builds running in this process; a signal handler removes them. */
const active = new Set<string>();

export function yearDir(buildsRoot: string, year: number): string {
  return join(buildsRoot, String(year));
}

/** Creates a fresh temporary directory for a build and registers it for cleanup. */
export function createTmpBuildDir(buildsRoot: string, year: number, hash: string): string {
  const dir = join(yearDir(buildsRoot, year), `${TMP_PREFIX}${hash.slice(0, 16)}-${process.pid}-${Date.now()}`);
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

/** Removes temporary directories left by builds whose process is gone (killed with SIGKILL, power loss). */
export function removeStaleTmpDirs(buildsRoot: string, year: number): string[] {
  const dir = yearDir(buildsRoot, year);
  if (!existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(TMP_PREFIX)) continue;
    const pid = Number(name.slice(TMP_PREFIX.length).split('-')[1]);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue;
    if (pid === process.pid && active.has(join(dir, name))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
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

/** Moves a verified temporary build to `<year>/<hash>`. */
export function promote(tmpDir: string, buildsRoot: string, year: number, hash: string): string {
  const final = join(yearDir(buildsRoot, year), hash);
  if (existsSync(final)) rmSync(final, { recursive: true, force: true });
  renameSync(tmpDir, final);
  active.delete(tmpDir);
  return final;
}

/** Points `<year>/current` at `hash` atomically. */
export function switchCurrent(buildsRoot: string, year: number, hash: string): void {
  const dir = yearDir(buildsRoot, year);
  const tmpLink = join(dir, `${CURRENT_LINK}.${process.pid}.tmp`);
  rmSync(tmpLink, { force: true });
  symlinkSync(hash, tmpLink, 'dir');
  renameSync(tmpLink, join(dir, CURRENT_LINK));
}

/** The build hash `<year>/current` points at, or null. */
export function currentHash(buildsRoot: string, year: number): string | null {
  try {
    return readlinkSync(join(yearDir(buildsRoot, year), CURRENT_LINK));
  } catch {
    return null;
  }
}
