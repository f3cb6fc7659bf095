/**
 * @module One full garbage collection when a thread has loaded what it serves, before it takes
 * requests. Loading the builds leaves garbage in the old generation and the last loaded objects in the
 * young generation; left there, they are collected in the middle of traffic: a 7–12 ms scavenge that
 * copies them, then a 20–40 ms mark-compact (measured on the national build, one core). On
 * one core a pause of the main thread is a pause of every worker too.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** Collects every generation now; returns the milliseconds it took. */
export function settleHeap(): number {
  if (collect === undefined) {
    // --expose-gc set at run time installs gc() only in contexts created afterwards, so a new context
    // hands the function over and this realm's global object stays as it was. V8 flags are per process:
    // the flag stays on, since turning it off raced another thread between its set and its context.
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  const started = performance.now();
  collect();
  return performance.now() - started;
}
