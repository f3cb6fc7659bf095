/**
 * @module The data a running server answers from, swapped to newly published builds without a restart.
 *
 * A request takes `current()` once and answers wholly from that snapshot. Every use of a snapshot is
 * one synchronous run (REST handlers and MCP tool calls never await while they read data), so a swap,
 * which happens in a turn of its own (a timer, a signal), can never split a request between builds. A
 * retired snapshot's builds are closed on the next turn, unless the new snapshot still holds them: years
 * whose build did not change are shared, not reopened.
 *
 * A build that fails to open (checksums, sizes, a missing file) is never adopted: its year keeps the
 * build it had, and one line says why.
 */
import { currentHash } from '../engine/build-format.ts';
import {
  attachYearData,
  openYearData,
  openYears,
  registryOf,
  yearsWithBuilds,
  type DataRegistry,
  type YearData,
  type YearImage,
} from './data-registry.ts';

export interface ReloadResult {
  /** Years that now serve another build: year, old hash (null for a new year), new hash. */
  readonly adopted: ReadonlyArray<{ readonly year: number; readonly from: string | null; readonly to: string }>;
  /** Builds that were refused, with the one-line reason. */
  readonly refused: ReadonlyArray<{ readonly year: number; readonly reason: string }>;
}

export interface LiveRegistry {
  /** The snapshot to answer one request from. Take it once, at the start of the request. */
  current(): DataRegistry;
  /** Re-reads every year's `current` link and adopts the builds that changed. */
  reload(): ReloadResult;
  /** Called after each swap with the new snapshot (fronts drop what they derived from the old one). */
  onSwap(listener: (next: DataRegistry) => void): void;
  close(): void;
}

interface OpenYear {
  readonly data: YearData;
  /** What `current` named when this year was opened (a hash, or a staged directory's name). */
  readonly link: string;
}

/**
 * Snapshots over a changing set of open years: swapping publishes a new snapshot to the listeners and
 * closes, on the next turn, the builds no year holds any more.
 */
function snapshots(initial: ReadonlyMap<number, YearData>): {
  current(): DataRegistry;
  onSwap(listener: (next: DataRegistry) => void): void;
  swap(years: ReadonlyMap<number, YearData>, retired: readonly YearData[]): void;
} {
  let snapshot = registryOf(initial, false);
  const listeners: Array<(next: DataRegistry) => void> = [];
  return {
    current: () => snapshot,
    onSwap(listener) {
      listeners.push(listener);
    },
    swap(years, retired) {
      snapshot = registryOf(years, false);
      for (const l of listeners) l(snapshot);
      // No request can still be running on a retired build: each one ran within a synchronous turn.
      setImmediate(() => {
        for (const y of retired) y.ds.close();
      });
    },
  };
}

const dataOf = (years: ReadonlyMap<number, OpenYear>): Map<number, YearData> => new Map([...years].map(([y, o]) => [y, o.data]));

/** Opens every year with a current build; throws (the server does not start) if one cannot be opened. */
export function createLiveRegistry(
  buildsRoot: string,
  baseUrl: string,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): LiveRegistry {
  const found = yearsWithBuilds(buildsRoot);
  // Links first: if one moves while the builds open, the next reload sees the difference and adopts it.
  const links = new Map(found.map((year) => [year, currentHash(buildsRoot, year) ?? '']));
  const years = new Map<number, OpenYear>(
    [...openYears(buildsRoot, baseUrl, found)].map(([year, data]) => [year, { data, link: links.get(year)! }]),
  );
  const snaps = snapshots(dataOf(years));
  let closed = false;

  return {
    current: snaps.current,
    onSwap: snaps.onSwap,
    reload() {
      if (closed) return { adopted: [], refused: [] };
      const adopted: Array<{ year: number; from: string | null; to: string }> = [];
      const refused: Array<{ year: number; reason: string }> = [];
      const retired: YearData[] = [];
      for (const year of yearsWithBuilds(buildsRoot)) {
        const link = currentHash(buildsRoot, year);
        const had = years.get(year);
        if (link === null || link === had?.link) continue;
        let data: YearData;
        try {
          data = openYearData(buildsRoot, year, baseUrl);
        } catch (err) {
          const reason = err instanceof Error ? err.message.split('\n')[0]! : String(err);
          refused.push({ year, reason });
          log(
            `hpd: reload: not adopting ${year}/${link.slice(0, 12)}: ${reason}; ${had === undefined ? 'year not served' : `still serving ${year}/${had.data.ds.buildHash.slice(0, 12)}`}`,
          );
          continue;
        }
        // `current` moved back and forth to the build already served: nothing to swap.
        if (had !== undefined && data.ds.buildHash === had.data.ds.buildHash) {
          data.ds.close();
          years.set(year, { data: had.data, link });
          continue;
        }
        if (had !== undefined) retired.push(had.data);
        years.set(year, { data, link });
        adopted.push({ year, from: had?.data.ds.buildHash ?? null, to: data.ds.buildHash });
        log(
          `hpd: reload: serving ${year}/${data.ds.buildHash.slice(0, 12)}${had === undefined ? ' (new year)' : ` (was ${had.data.ds.buildHash.slice(0, 12)})`}`,
        );
      }
      if (adopted.length > 0) snaps.swap(dataOf(years), retired);
      return { adopted, refused };
    },
    close() {
      closed = true;
      for (const y of years.values()) y.data.ds.close();
      years.clear();
    },
  };
}

/** The images of every year a snapshot serves, for worker threads to attach to. */
export function imagesOf(registry: DataRegistry): YearImage[] {
  return registry.years.map((y) => registry.get(y)!.image);
}

/** A live registry that serves what another thread's live registry opened: REST worker threads. */
export interface FollowerRegistry extends LiveRegistry {
  /** Serves exactly these years' builds, attaching to the ones not served yet. */
  follow(images: readonly YearImage[]): void;
}

/**
 * Follows the main thread's live registry: the main thread opens and verifies each build once, and
 * each worker attaches to its shared memory (its own LMDB handle only), so adopting a build costs a
 * worker milliseconds instead of a second of blocked requests.
 */
export function createFollowerRegistry(
  images: readonly YearImage[],
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): FollowerRegistry {
  const years = new Map<number, YearData>();
  try {
    for (const image of images) years.set(image.year, attachYearData(image));
  } catch (err) {
    for (const y of years.values()) y.ds.close();
    throw err;
  }
  const snaps = snapshots(years);
  let closed = false;
  return {
    current: snaps.current,
    onSwap: snaps.onSwap,
    reload: () => ({ adopted: [], refused: [] }),
    follow(next) {
      if (closed) return;
      const following = new Map<number, YearData>();
      for (const image of next) {
        const had = years.get(image.year);
        if (had?.ds.buildHash === image.dataset.manifest.build_hash) {
          following.set(image.year, had);
          continue;
        }
        try {
          following.set(image.year, attachYearData(image));
        } catch (err) {
          // The main thread verified this build; failing here is this thread's own trouble (LMDB).
          log(
            `hpd: reload: cannot attach ${image.year}/${image.dataset.manifest.build_hash.slice(0, 12)}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
          );
          if (had !== undefined) following.set(image.year, had);
        }
      }
      const retired = [...years.values()].filter((y) => following.get(y.year) !== y);
      if (retired.length === 0 && following.size === years.size) return;
      years.clear();
      for (const [y, d] of following) years.set(y, d);
      snaps.swap(new Map(years), retired);
    },
    close() {
      closed = true;
      for (const y of years.values()) y.ds.close();
      years.clear();
    },
  };
}

/** A registry opened once (tests, benchmarks) seen as a live one that never changes. */
export function fixedRegistry(registry: DataRegistry): LiveRegistry {
  return {
    current: () => registry,
    reload: () => ({ adopted: [], refused: [] }),
    onSwap() {},
    close: () => registry.close(),
  };
}

/** The fronts accept either; a plain registry never swaps. */
export function asLiveRegistry(r: DataRegistry | LiveRegistry): LiveRegistry {
  return 'reload' in r ? r : fixedRegistry(r);
}
