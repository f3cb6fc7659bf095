/** @module Per-test cleanup for tests that open stores in temporary directories. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/**
 * Cleanup for one test, run last-in first-out in a single after hook (node:test runs separate hooks
 * in registration order), so what was opened last (a quota, a store) closes before what it depends on
 * (its store, its directory).
 */
export function cleanup(t: TestContext): (fn: () => unknown) => void {
  const stack: Array<() => unknown> = [];
  t.after(async () => {
    for (let fn = stack.pop(); fn !== undefined; fn = stack.pop()) await fn();
  });
  return (fn) => stack.push(fn);
}

/** A temporary directory removed at cleanup. */
export function tempDir(defer: (fn: () => unknown) => void, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
