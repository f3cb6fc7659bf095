/**
 * @module The pid file through which `hpd reload` finds the running `hpd serve` of a state directory.
 */
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'hpd-serve.pid';

export function pidFilePath(stateDir: string): string {
  return join(stateDir, PID_FILE);
}

export function writePidFile(stateDir: string, pid: number = process.pid): void {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(pidFilePath(stateDir), `${pid}\n`);
}

/** Removes the file if it still names `pid` (another server may have started since). */
export function removePidFile(stateDir: string, pid: number = process.pid): void {
  if (readPidFile(stateDir) === pid) rmSync(pidFilePath(stateDir), { force: true });
}

export function readPidFile(stateDir: string): number | null {
  try {
    const pid = Number(readFileSync(pidFilePath(stateDir), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
