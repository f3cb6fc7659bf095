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
import { openYearData, openYears, registryOf, yearsWithBuilds, type DataRegistry, type YearData } from './data-registry.ts';

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

/** Opens every year with a current build; throws (the server does not start) if one cannot be opened. */
export function createLiveRegistry(buildsRoot: string, baseUrl: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): LiveRegistry {
  const found = yearsWithBuilds(buildsRoot);
  // Links first: if one moves while the builds open, the next reload sees the difference and adopts it.
  const links = new Map(found.map((year) => [year, currentHash(buildsRoot, year) ?? '']));
  const years = new Map<number, OpenYear>([...openYears(buildsRoot, baseUrl, found)].map(([year, data]) => [year, { data, link: links.get(year)! }]));
  let snapshot = snapshotOf(years);
  let closed = false;
  const listeners: Array<(next: DataRegistry) => void> = [];

  return {
    current: () => snapshot,
    onSwap(listener) {
      listeners.push(listener);
    },
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
          log(`hpd: reload: not adopting ${year}/${link.slice(0, 12)}: ${reason}; ${had === undefined ? 'year not served' : `still serving ${year}/${had.data.ds.buildHash.slice(0, 12)}`}`);
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
        log(`hpd: reload: serving ${year}/${data.ds.buildHash.slice(0, 12)}${had === undefined ? ' (new year)' : ` (was ${had.data.ds.buildHash.slice(0, 12)})`}`);
      }
      if (adopted.length > 0) {
        snapshot = snapshotOf(years);
        for (const l of listeners) l(snapshot);
        // No request can still be running on a retired build: each one ran within a synchronous turn.
        setImmediate(() => {
          for (const y of retired) y.ds.close();
        });
      }
      return { adopted, refused };
    },
    close() {
      closed = true;
      for (const y of years.values()) y.data.ds.close();
      years.clear();
    },
  };
}

function snapshotOf(years: ReadonlyMap<number, OpenYear>): DataRegistry {
  return registryOf(new Map([...years].map(([y, o]) => [y, o.data])), false);
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
