/**
 * @module Noticing that a build was published (`current` moved by `hpd build` or `hpd builds use`, or a
 * year added) so a running server adopts it within about a second.
 *
 * fs.watch on the builds root and on each year's directory reacts at once, but inotify can miss events
 * (a directory created and filled before it is watched, network filesystems); a poll of the `current`
 * links every `pollMs` is the floor. Both only signal: what changed is read by the live registry.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { catalogYears } from '../../build/build-catalog.ts';
import { currentHash } from '../engine/build-format.ts';

export interface BuildWatcher {
  close(): void;
}

export interface WatchOptions {
  /** Longest time between a publication and the call; default 1000 ms. */
  readonly pollMs?: number;
  /** Events closer than this are one change (a publication renames several entries); default 100 ms. */
  readonly debounceMs?: number;
}

/** What a publication changes: the years and where each `current` points. */
export function buildsSignature(buildsRoot: string): string {
  return catalogYears(buildsRoot)
    .map((y) => `${y}=${currentHash(buildsRoot, y) ?? ''}`)
    .join(',');
}

export function watchBuilds(buildsRoot: string, onChange: () => void, opts: WatchOptions = {}): BuildWatcher {
  const pollMs = opts.pollMs ?? 1000;
  const debounceMs = opts.debounceMs ?? 100;
  let last = buildsSignature(buildsRoot);
  let pending: NodeJS.Timeout | undefined;
  const watchers = new Map<string, FSWatcher>();

  const check = (): void => {
    pending = undefined;
    watchYears();
    const now = buildsSignature(buildsRoot);
    if (now === last) return;
    last = now;
    onChange();
  };
  const soon = (): void => {
    if (pending === undefined) pending = setTimeout(check, debounceMs);
  };
  const watchDir = (dir: string): void => {
    if (watchers.has(dir)) return;
    try {
      const w = watch(dir, soon);
      w.on('error', () => {
        w.close();
        watchers.delete(dir);
      });
      watchers.set(dir, w);
    } catch {
      // Not there yet, or not watchable: the poll covers it.
    }
  };
  const watchYears = (): void => {
    for (const year of catalogYears(buildsRoot)) watchDir(join(buildsRoot, String(year)));
  };
  watchDir(buildsRoot);
  watchYears();
  const poll = setInterval(check, pollMs);
  poll.unref();
  return {
    close() {
      clearInterval(poll);
      if (pending !== undefined) clearTimeout(pending);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
