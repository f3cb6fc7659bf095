/**
 * @module The data a server answers from: every plan year with a current build, opened once.
 *
 * Operations read one {@link YearData} per request. Its plan catalog holds the immutable parts of every
 * plan summary (links, deductibles, names), built once when the build is opened, so a search response
 * only adds the premium of each row.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CURRENT_LINK } from '../engine/build-format.ts';
import { attachDataset, openCurrentDataset, type Dataset, type DatasetImage, type ZipLocation } from '../engine/dataset.ts';
import { statePremiums } from '../engine/manifest.ts';
import { loadRules } from '../engine/rules.ts';
import type { TaxYearRules } from '../engine/rules-types.ts';
import { attachPlanCatalog, buildPlanCatalog, type CatalogImage, type PlanCatalog } from './plan-catalog.ts';
import { InvariantError } from '../invariant.ts';
import { benchmarkOnlyFreshness } from './benchmark-data.ts';

/** States with their own marketplace platform (docs/compatibility.md#data-source-and-freshness): labelled `state_exchange`. */
export const STATE_EXCHANGE_STATES: ReadonlySet<string> = new Set([
  'CA',
  'CO',
  'CT',
  'DC',
  'GA',
  'ID',
  'IL',
  'KY',
  'MA',
  'MD',
  'ME',
  'MN',
  'NJ',
  'NM',
  'NV',
  'NY',
  'PA',
  'RI',
  'VA',
  'VT',
  'WA',
]);

export interface YearData {
  readonly year: number;
  readonly ds: Dataset;
  readonly rules: TaxYearRules;
  readonly catalog: PlanCatalog;
  readonly statesWithPlans: ReadonlySet<string>;
  /** `data_source` for a response about `state` (null state: the build's own label). */
  dataSource(state: string | null): string;
  /** `data_freshness` for a response about `state`: its source's date, and whether its premiums are modeled. */
  freshness(state: string | null): string;
  /** States with plan data, each with its premium provenance (real Rate PUF or modeled), for `/years`. */
  readonly premiumsByState: ReadonlyMap<string, 'rate_puf' | 'modeled'>;
  /** What a REST worker thread attaches to (shared memory; see {@link attachYearData}). */
  readonly image: YearImage;
}

/** One opened year as it travels to worker threads: SharedArrayBuffers travel by reference. */
export interface YearImage {
  readonly year: number;
  readonly baseUrl: string;
  readonly dataset: DatasetImage;
  readonly catalog: CatalogImage;
}

export interface DataRegistry {
  /** Loaded years, ascending. */
  readonly years: readonly number[];
  /** Default `year`: the newest loaded year. */
  readonly currentYear: number;
  get(year: number): YearData | undefined;
  /** Hash over every loaded build: part of every ETag. */
  readonly version: string;
  /** One line per build served with reduced checks (format 1 builds without checksums); `hpd serve` prints them. */
  readonly warnings: readonly string[];
  /** Build hash served per year, for /readyz and operators. */
  readonly builds: Readonly<Record<string, string>>;
  close(): void;
}

/** Years that have a `current` build under `buildsRoot`. */
export function yearsWithBuilds(buildsRoot: string): number[] {
  if (!existsSync(buildsRoot)) return [];
  return readdirSync(buildsRoot)
    .filter((n) => /^\d{4}$/.test(n) && existsSync(join(buildsRoot, n, CURRENT_LINK)))
    .map(Number)
    .sort((a, b) => a - b);
}

export function openRegistry(buildsRoot: string, baseUrl: string, years: readonly number[] = yearsWithBuilds(buildsRoot)): DataRegistry {
  return registryOf(openYears(buildsRoot, baseUrl, years), true);
}

/** Opens the current build of each year; none stays open if one fails. */
export function openYears(buildsRoot: string, baseUrl: string, years: readonly number[]): Map<number, YearData> {
  // `hpd serve` refuses a builds root without a build first, in one line (serve-command.ts); reaching
  // this is a caller's bug.
  if (years.length === 0) throw new InvariantError(`no build under ${buildsRoot}`);
  const byYear = new Map<number, YearData>();
  try {
    for (const year of years) byYear.set(year, openYearData(buildsRoot, year, baseUrl));
  } catch (err) {
    for (const y of byYear.values()) y.ds.close();
    throw err;
  }
  return byYear;
}

/**
 * Opens the current build of one year with everything a request needs besides it. Sizes are checked
 * and, on this first adoption by the process, every file hashed (~0.1–0.3 s for the national build);
 * a damaged build throws BuildIntegrityError.
 */
export function openYearData(buildsRoot: string, year: number, baseUrl: string): YearData {
  const ds = openCurrentDataset(buildsRoot, year);
  try {
    return yearDataOver(year, ds, buildPlanCatalog(ds, baseUrl, year), baseUrl);
  } catch (err) {
    ds.close();
    throw err;
  }
}

/**
 * A year another thread opened and verified: the same tables, derived columns and plan catalog (shared
 * memory), with this thread's own LMDB handle. Nothing is hashed, read or derived again.
 */
export function attachYearData(image: YearImage): YearData {
  const ds = attachDataset(image.dataset);
  try {
    return yearDataOver(image.year, ds, attachPlanCatalog(image.catalog), image.baseUrl);
  } catch (err) {
    ds.close();
    throw err;
  }
}

function yearDataOver(year: number, ds: Dataset, catalog: PlanCatalog, baseUrl: string): YearData {
  const rules = loadRules(ds.manifest.rules_year);
  const statesWithPlans = new Set(ds.statesWithPlans());
  const { data_source: label, data_freshness: freshness } = ds.manifest;
  // Builds compiled before provenance was per state have only the build's labels, true of every state.
  const provenance = ds.manifest.provenance ?? {};
  const benchmarkOnly = new Map<string, string>();
  return {
    year,
    ds,
    rules,
    catalog,
    statesWithPlans,
    dataSource: (state) => {
      if (state === null) return label;
      const own = provenance[state];
      if (own !== undefined) return own.data_source;
      return statesWithPlans.has(state) || !STATE_EXCHANGE_STATES.has(state) ? label : 'state_exchange';
    },
    freshness: (state) => {
      if (state === null) return freshness;
      const own = provenance[state]?.data_freshness;
      if (own !== undefined) return own;
      if (statesWithPlans.has(state)) return freshness;
      // Only the benchmark table answers for this state: its vintage, not the plan files' date.
      let label = benchmarkOnly.get(state);
      if (label === undefined) benchmarkOnly.set(state, (label = benchmarkOnlyFreshness(year, state, ds.manifest)));
      return label;
    },
    premiumsByState: new Map([...statesWithPlans].sort().map((s) => [s, statePremiums(ds.manifest, s)] as const)),
    image: { year, baseUrl, dataset: ds.image, catalog: catalog.image },
  };
}

/**
 * A registry over opened years. `owned`: its close() closes them (a registry opened once); a live
 * registry shares years between snapshots and closes each year itself when no snapshot holds it.
 */
export function registryOf(byYear: ReadonlyMap<number, YearData>, owned: boolean): DataRegistry {
  const sorted = [...byYear.keys()].sort((a, b) => a - b);
  const version = createHash('sha256')
    .update(sorted.map((y) => `${y}:${byYear.get(y)!.ds.buildHash}`).join(','))
    .digest('hex')
    .slice(0, 20);
  return {
    years: sorted,
    currentYear: sorted.at(-1)!,
    get: (year) => byYear.get(year),
    version,
    warnings: [...byYear.values()].map((y) => y.ds.integrityWarning).filter((w): w is string => w !== null),
    builds: Object.fromEntries(sorted.map((y) => [String(y), byYear.get(y)!.ds.buildHash])),
    close() {
      if (owned) for (const y of byYear.values()) y.ds.close();
    },
  };
}

/** "Rating Area 10", the CMS spelling the API uses. */
export function ratingAreaLabel(area: number): string {
  return `Rating Area ${area}`;
}

/** Picks the location: the primary one, or the county the caller named. */
export function pickLocation(locations: readonly ZipLocation[], countyFips: string | undefined): ZipLocation | null {
  if (countyFips === undefined) return locations[0] ?? null;
  // A loop, not find() with a closure: every priced request with a county comes here.
  for (let i = 0; i < locations.length; i++) if (locations[i]!.countyFips === countyFips) return locations[i]!;
  return null;
}
