/** @module Waiting for what a test expects to happen, instead of sleeping a fixed time first. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `ok` every 5 ms until it holds, and fails naming `what` once `ms` have passed (a function is
 * asked then, so the message can say what the state was). Resolves to the milliseconds it took, for
 * tests whose requirement is a bound on that time.
 *
 * @example await eventually('the revocation reaches b', () => !authenticate(h, b, Date.now()).ok, 1000);
 */
export async function eventually(what: string | (() => string), ok: () => boolean | Promise<boolean>, ms = 2000): Promise<number> {
  const start = Date.now();
  while (!(await ok())) {
    if (Date.now() - start > ms) assert.fail(`not within ${ms} ms: ${typeof what === 'string' ? what : what()}`);
    await sleep(5);
  }
  return Date.now() - start;
}
