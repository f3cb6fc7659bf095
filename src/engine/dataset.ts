/**
 * @module Opening a compiled build and reading it: pure, synchronous queries over RAM.
 *
 * `openDataset` maps the LMDB file (plan details and other records read one at a time) and loads the
 * columnar container into typed arrays in a single read. After that nothing here does I/O except the
 * LMDB reads, which are memory-mapped page lookups; no HTTP and no JSON parsing on any query path.
 */
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InvariantError } from '../invariant.ts';
import { open as openLmdb, type Database, type RootDatabase } from 'lmdb';
import { AGE_BAND_COUNT, ageBand } from './age-bands.ts';
import { BuildIntegrityError, checkBuildForOpen } from './build-integrity.ts';
import {
  CURRENT_LINK,
  DB,
  LMDB_FILE,
  LMDB_OPTIONS,
  METAL_CODES,
  NO_LIST,
  NULL_MONEY,
  PLAN_TYPE_CODES,
  attachTables,
  readTables,
  SLCSP_SOURCE,
  TABLES_FILE,
  type LoadedTables,
  type TablesMeta,
} from './build-format.ts';
import { readDentalCatalog, type DentalCatalog } from './dental.ts';
import type { TierColumn } from './household.ts';
import type { BuildManifest } from './manifest.ts';
import type { MetalLevel, PlanType, PlanVariantRecord } from './plan-record.ts';

export interface ZipLocation {
  readonly zip: string;
  readonly state: string;
  readonly countyFips: string;
  readonly countyName: string;
  /** Rating area number within the state ("Rating Area 10" → 10). */
  readonly ratingArea: number;
  /** Index of the (state, rating area) pair in the build's area table. */
  readonly areaIndex: number;
  /** HUD residential ratio of the ZIP in this county. */
  readonly residentialShare: number;
  /** Plan list offered at this location; {@link NO_LIST} when none (no plan data for the state). */
  readonly listId: number;
  readonly primary: boolean;
}

export type SortKey = 'premium' | 'deductible' | 'max_oop' | 'name';

/** A list's positions in one order: `positions[start, start + length)`, a place in an array shared by every list. */
export interface ListOrderRef {
  positions: Uint16Array;
  start: number;
  length: number;
}

export interface PlanSummaryFields {
  readonly index: number;
  readonly standardComponentId: string;
  readonly name: string;
  readonly metal: MetalLevel;
  readonly planType: PlanType;
  readonly state: string;
  readonly issuerId: string;
  readonly issuer: string;
  readonly flags: number;
  /** Individual in-network tier-1 deductible of the -01 variant, null when not applicable. */
  readonly deductible: number | null;
  readonly maxOutOfPocket: number | null;
}

export interface SlcspValue {
  /** Monthly premium in dollars. */
  readonly amount: number;
  readonly source: 'rate_puf' | 'modeled' | 'benchmark_only';
}

export interface IssuerSummary {
  readonly issuer_id: string;
  readonly name: string;
  readonly plan_count: number;
}

export interface CountyRecord {
  readonly state: string;
  readonly name: string;
  readonly rating_areas: readonly number[];
}

/**
 * The columns a walk over a plan list reads, for the engine's hot loops (search): plain typed arrays
 * laid out so that one list's values sit next to each other. A search walks every entry of a list (the
 * total counts them all) while the network stack evicts the caches between requests; reading each
 * plan's summary object and a premium row scattered over a 5 MB table cost a cache miss per entry.
 */
export interface ListColumns {
  /** First entry of each list: list `l` spans entries [listStart[l], listStart[l + 1]). */
  readonly listStart: Uint32Array;
  /** Plan index of each list entry. */
  readonly entryPlan: Uint32Array;
  /**
   * Monthly premium in cents of each entry by age band, band-major (0 = not sold at that age): a
   * list's premiums for one age are contiguous. Entry `e` at band `b`: `entryCents[b * entryCount + e]`.
   */
  readonly entryCents: Uint32Array;
  readonly entryCount: number;
  /** Per entry, the plan's METAL_CODES / PLAN_TYPE_CODES index and PLAN_FLAG bits. */
  readonly entryMetal: Uint8Array;
  readonly entryType: Uint8Array;
  readonly entryFlags: Uint8Array;
  /** Per plan: equal numbers exactly when the lower-cased names are equal (name sort runs). */
  readonly nameKey: Uint32Array;
}

export interface Dataset {
  readonly dir: string;
  readonly year: number;
  readonly buildHash: string;
  readonly manifest: BuildManifest;
  /** Null for a checksummed build; a one-line warning for a format 1 build opened with sizes checked only. */
  readonly integrityWarning: string | null;
  readonly planCount: number;
  readonly zipCount: number;
  /** Resident bytes of the columnar tables. */
  readonly tableBytes: number;
  /** What another thread needs to attach to this build without reading or deriving anything again. */
  readonly image: DatasetImage;
  readonly columns: ListColumns;
  /** Locations of a ZIP, primary first; null for an unknown ZIP. */
  /** The locations of a ZIP, primary first (shared by every caller: never modified). */
  resolveZip(zip: string): readonly ZipLocation[] | null;
  /**
   * The 2022 planning regions of a Connecticut ZIP (the county equivalents of today's Census and HUD
   * files; its rating areas follow its legacy counties), most residential addresses first; empty
   * elsewhere.
   */
  planningRegions(zip: string): ReadonlyArray<{ readonly fips: string; readonly name: string; readonly residentialShare: number }>;
  /** Number of plans offered at a location. */
  listSize(listId: number): number;
  /**
   * Plan-list positions in sort order for one age (premium order depends on age). Positions index
   * {@link listPlan} and {@link listPremiumCents}; ties are broken by plan id.
   */
  listOrder(listId: number, key: SortKey, age: number): Uint16Array;
  /** {@link listOrder} as a place in a shared array, written into `ref` (no view is made: a search's hot path). */
  listOrderInto(listId: number, key: SortKey, age: number, ref: ListOrderRef): ListOrderRef;
  /** Plan index at a list position. */
  listPlan(listId: number, position: number): number;
  /** Monthly premium in cents at a list position for an age; 0 when the plan is not sold at that age. */
  listPremiumCents(listId: number, position: number, age: number): number;
  /** Summary fields of a plan index (its -01 variant). */
  plan(index: number): PlanSummaryFields;
  planIndex(standardComponentId: string): number | undefined;
  /** Monthly premium in dollars of a plan in a rating area for an age, or null when not priced there. */
  premium(standardComponentId: string, ratingArea: number, age: number): number | null;
  /** Full detail record of a plan variant (`…-01`), read from LMDB. */
  planRecord(variantId: string): PlanVariantRecord | undefined;
  /** SLCSP of a rating area for one age. */
  slcsp(state: string, ratingArea: number, age: number): SlcspValue | null;
  issuers(state: string): readonly IssuerSummary[];
  county(fips: string): CountyRecord | undefined;
  crosswalk(standardComponentId: string): unknown;
  /**
   * A community-rated plan's premium for a family tier as its Rate PUF gives it, in cents; null when
   * the file has no such amount (modeled or age-rated plans). Read from LMDB once, on first use.
   */
  familyTierCents(standardComponentId: string, ratingArea: number, column: TierColumn): number | null;
  /** The stand-alone dental plans, read from LMDB once, on first use. */
  dental(): DentalCatalog;
  /** States with plan data in this build. */
  statesWithPlans(): readonly string[];
  planIds(): readonly string[];
  /** Any ZIP of the build (for smoke checks). */
  sampleZip(): string | null;
  close(): void;
}

/**
 * An opened build as it travels to REST worker threads: the tables and the columns derived from them
 * live in SharedArrayBuffers, so every thread reads the one copy the opening thread made, and a worker
 * adopts a build without hashing, reading or deriving anything (only LMDB is opened per thread).
 */
export interface DatasetImage {
  readonly dir: string;
  readonly manifest: BuildManifest;
  readonly integrityWarning: string | null;
  /** The tables container, as read from tables.bin. */
  readonly tables: SharedArrayBuffer;
  /** The list columns derived from the tables (see {@link deriveColumns}). */
  readonly derived: SharedArrayBuffer;
}

export interface OpenOptions {
  /**
   * When to hash the files: 'first-open' (default) hashes a build the first time this process adopts it
   * and then checks sizes only; 'always' hashes on every open. Sizes are checked on every open either way.
   */
  readonly checksums?: 'always' | 'first-open';
  /** The build hash the manifest must carry (default: the directory name, when it is a hash). */
  readonly expectedHash?: string;
}

/** Opens the build `year/current` under `buildsRoot`. */
export function openCurrentDataset(buildsRoot: string, year: number, opts: OpenOptions = {}): Dataset {
  const link = join(buildsRoot, String(year), CURRENT_LINK);
  let dir: string;
  try {
    dir = realpathSync(link);
  } catch {
    let target = '(unreadable)';
    try {
      target = readlinkSync(link);
    } catch {
      // not a link at all: reported as such below
    }
    throw new BuildIntegrityError(`${year}/current`, 'current', `points at ${target}, which does not exist`);
  }
  return openDataset(dir, opts);
}

/**
 * Opens a build directory. The integrity check comes first: nothing is read or mapped from a build whose
 * files do not have the sizes (and, on first adoption, the checksums) its manifest records; a damaged
 * build throws {@link BuildIntegrityError}.
 */
export function openDataset(dir: string, opts: OpenOptions = {}): Dataset {
  const check = checkBuildForOpen(dir, opts.checksums ?? 'first-open', opts.expectedHash);
  const manifest = check.manifest;
  const damaged = (problem: string): BuildIntegrityError =>
    new BuildIntegrityError(`${basename(dirname(dir))}/${manifest.build_hash.slice(0, 12)}`, TABLES_FILE, problem);
  const tables = readTables(join(dir, TABLES_FILE), damaged);
  if (tables.meta.buildHash !== manifest.build_hash)
    throw damaged(`belongs to build ${tables.meta.buildHash.slice(0, 12)}, the manifest to ${manifest.build_hash.slice(0, 12)}`);
  const image: DatasetImage = { dir, manifest, integrityWarning: check.legacy, tables: tables.buffer, derived: deriveColumns(tables) };
  return datasetOver(image, tables);
}

/**
 * Attaches to a build another thread opened and verified ({@link Dataset.image}): the tables and derived
 * columns are the shared ones; this thread opens its own read-only LMDB handle.
 */
export function attachDataset(image: DatasetImage): Dataset {
  // The opening thread checked this container: a damaged one never reaches another thread.
  const damaged = (problem: string): InvariantError => new InvariantError(`${image.dir}: shared tables: ${problem}`);
  return datasetOver(image, attachTables(image.tables, join(image.dir, TABLES_FILE), damaged));
}

interface DerivedColumns {
  readonly entryCents: Uint32Array;
  readonly nameKey: Uint32Array;
  /** Per plan, its first premium pair: plan `p`'s pairs span [planPairStart[p], planPairStart[p + 1]). */
  readonly planPairStart: Uint32Array;
  readonly entryMetal: Uint8Array;
  readonly entryType: Uint8Array;
  readonly entryFlags: Uint8Array;
}

/** Views of the derived columns in their shared buffer: the u32 columns first, then the u8 ones. */
function derivedViews(buffer: SharedArrayBuffer, entryCount: number, planCount: number): DerivedColumns {
  const cents = entryCount * AGE_BAND_COUNT;
  const u8At = (cents + 2 * planCount + 1) * 4;
  return {
    entryCents: new Uint32Array(buffer, 0, cents),
    nameKey: new Uint32Array(buffer, cents * 4, planCount),
    planPairStart: new Uint32Array(buffer, (cents + planCount) * 4, planCount + 1),
    entryMetal: new Uint8Array(buffer, u8At, entryCount),
    entryType: new Uint8Array(buffer, u8At + entryCount, entryCount),
    entryFlags: new Uint8Array(buffer, u8At + 2 * entryCount, entryCount),
  };
}

/**
 * The per-entry columns a search walks (see {@link ListColumns}), copied out of the plan and premium
 * tables once per build, and the name-sort keys.
 */
function deriveColumns(tables: LoadedTables): SharedArrayBuffer {
  const entryPlan = tables.table('entry.plan');
  const entryPair = tables.table('entry.pair');
  const pairCents = tables.table('pair.cents');
  const planMetal = tables.table('plan.metal');
  const planType = tables.table('plan.type');
  const planFlags = tables.table('plan.flags');
  const entryCount = entryPlan.length;
  const names = tables.meta.planNames;
  const buffer = new SharedArrayBuffer((entryCount * AGE_BAND_COUNT + 2 * names.length + 1) * 4 + 3 * entryCount);
  const d = derivedViews(buffer, entryCount, names.length);
  // The compiler writes pairs in plan order: each plan's pairs are one run.
  const pairPlan = tables.table('pair.plan');
  for (let i = 0, p = 0; p <= names.length; p++) {
    while (i < pairPlan.length && pairPlan[i]! < p) i++;
    d.planPairStart[p] = i;
  }
  for (let i = 1; i < pairPlan.length; i++) {
    if (pairPlan[i]! < pairPlan[i - 1]!) throw new InvariantError(`tables: premium pairs out of plan order at row ${i}`);
  }
  for (let e = 0; e < entryCount; e++) {
    const p = entryPlan[e]!;
    const row = entryPair[e]! * AGE_BAND_COUNT;
    for (let b = 0; b < AGE_BAND_COUNT; b++) d.entryCents[b * entryCount + e] = pairCents[row + b]!;
    d.entryMetal[e] = planMetal[p]!;
    d.entryType[e] = planType[p]!;
    d.entryFlags[e] = planFlags[p]!;
  }
  // Equal keys exactly when the lower-cased names are equal (name sort runs).
  const keys = new Map<string, number>();
  for (let i = 0; i < names.length; i++) {
    const lower = names[i]!.toLowerCase();
    let k = keys.get(lower);
    if (k === undefined) keys.set(lower, (k = keys.size));
    d.nameKey[i] = k;
  }
  return buffer;
}

/** Every family-tier row of the build (a few per community-rated plan), by `scid:area`. */
function readFamilyTiers(db: Database): Map<string, Partial<Record<TierColumn, number | null>>> {
  const out = new Map<string, Partial<Record<TierColumn, number | null>>>();
  for (const { key, value } of db.getRange()) {
    const [scid, area] = key as [string, number];
    out.set(`${scid}:${area}`, value as Partial<Record<TierColumn, number | null>>);
  }
  return out;
}

function datasetOver(image: DatasetImage, tables: LoadedTables): Dataset {
  const { dir, manifest } = image;
  const meta: TablesMeta = tables.meta;
  const root: RootDatabase = openLmdb({ path: join(dir, LMDB_FILE), ...LMDB_OPTIONS, readOnly: true, cache: false });
  const db = (name: string): Database => root.openDB({ name });
  const plansDb = db(DB.plans);
  const countiesDb = db(DB.counties);
  const issuersDb = db(DB.issuers);
  const crosswalkDb = db(DB.crosswalk);
  let tiers: Map<string, Partial<Record<TierColumn, number | null>>> | undefined;
  let dental: DentalCatalog | undefined;

  const zipStart = tables.table('zip.start');
  const pairCents = tables.table('pair.cents');
  const listStart = tables.table('list.start');
  const entryPlan = tables.table('entry.plan');
  const entryPair = tables.table('entry.pair');
  const orderName = tables.table('order.name');
  const orderDeductible = tables.table('order.deductible');
  const orderMoop = tables.table('order.moop');
  const premiumRef = tables.table('order.premium-ref');
  const premiumPool = tables.table('order.premium-pool');

  const areaIndexMap = areaIndexes(tables);
  const planIndexMap = new Map(meta.plans.map((s, i) => [s, i]));
  let zipCount = 0;
  for (let z = 0; z < 100_000; z++) if (zipStart[z + 1]! > zipStart[z]!) zipCount++;
  const summaries = planSummaries(tables);
  const entryCount = entryPlan.length;
  const { entryCents, nameKey, entryMetal, entryType, entryFlags, planPairStart } = derivedViews(
    image.derived,
    entryCount,
    meta.plans.length,
  );
  const statesWithPlans = [...new Set(summaries.map((s) => s.state))].sort();
  const listSize = (listId: number): number => listStart[listId + 1]! - listStart[listId]!;

  return {
    dir,
    year: manifest.year,
    buildHash: manifest.build_hash,
    manifest,
    integrityWarning: image.integrityWarning,
    image,
    planCount: meta.plans.length,
    zipCount,
    tableBytes: tables.bytes,
    columns: { listStart, entryPlan, entryCents, entryCount, entryMetal, entryType, entryFlags, nameKey },
    resolveZip: zipResolver(tables),
    planningRegions: planningRegionsOf(meta),
    listSize: (listId) => (listId === NO_LIST ? 0 : listSize(listId)),
    listOrder(listId, key, age) {
      const ref = this.listOrderInto(listId, key, age, { positions: premiumPool, start: 0, length: 0 });
      return ref.positions.subarray(ref.start, ref.start + ref.length);
    },
    listOrderInto(listId, key, age, ref) {
      const premium = key === 'premium';
      ref.positions = premium ? premiumPool : key === 'name' ? orderName : key === 'deductible' ? orderDeductible : orderMoop;
      ref.start = premium ? premiumRef[listId * AGE_BAND_COUNT + ageBand(age)]! : listStart[listId]!;
      ref.length = listSize(listId);
      return ref;
    },
    listPlan: (listId, position) => entryPlan[listStart[listId]! + position]!,
    listPremiumCents: (listId, position, age) => pairCents[entryPair[listStart[listId]! + position]! * AGE_BAND_COUNT + ageBand(age)]!,
    plan: (index) => summaries[index]!,
    planIndex: (scid) => planIndexMap.get(scid),
    premium: premiumLookup(tables, planIndexMap, areaIndexMap, summaries, planPairStart),
    planRecord: (id) => plansDb.get(id) as PlanVariantRecord | undefined,
    slcsp: slcspLookup(tables, areaIndexMap),
    issuers: (state) => (issuersDb.get(state) as IssuerSummary[] | undefined) ?? [],
    county: (fips) => countiesDb.get(fips) as CountyRecord | undefined,
    crosswalk: (scid) => crosswalkDb.get(scid),
    familyTierCents: (scid, area, column) => {
      tiers ??= readFamilyTiers(db(DB.familyTiers));
      const dollars = tiers.get(`${scid}:${area}`)?.[column];
      return typeof dollars === 'number' ? Math.round(dollars * 100) : null;
    },
    dental: () => (dental ??= readDentalCatalog(db)),
    statesWithPlans: () => statesWithPlans,
    planIds: () => meta.plans,
    sampleZip() {
      for (let z = 0; z < 100_000; z++) if (zipStart[z + 1]! > zipStart[z]!) return String(z).padStart(5, '0');
      return null;
    },
    close() {
      void root.close();
    },
  };
}

/** "ST:n" → index of the (state, rating area) pair in the area table. */
function areaIndexes(tables: LoadedTables): Map<string, number> {
  const areaState = tables.table('area.state');
  const areaNumber = tables.table('area.number');
  const out = new Map<string, number>();
  for (let i = 0; i < areaNumber.length; i++) out.set(`${tables.meta.states[areaState[i]!]}:${areaNumber[i]}`, i);
  return out;
}

function planSummaries(tables: LoadedTables): PlanSummaryFields[] {
  const { meta } = tables;
  const planMetal = tables.table('plan.metal');
  const planType = tables.table('plan.type');
  const planState = tables.table('plan.state');
  const planIssuer = tables.table('plan.issuer');
  const planFlags = tables.table('plan.flags');
  const planDeductible = tables.table('plan.deductible');
  const planMoop = tables.table('plan.moop');
  return meta.plans.map((scid, i) => {
    const issuer = meta.issuers[planIssuer[i]!]!;
    const d = planDeductible[i]!;
    const m = planMoop[i]!;
    return {
      index: i,
      standardComponentId: scid,
      name: meta.planNames[i]!,
      metal: METAL_CODES[planMetal[i]!]!,
      planType: PLAN_TYPE_CODES[planType[i]!]!,
      state: meta.states[planState[i]!] ?? '',
      issuerId: issuer.id,
      issuer: issuer.name,
      flags: planFlags[i]!,
      deductible: d === NULL_MONEY ? null : d,
      maxOutOfPocket: m === NULL_MONEY ? null : m,
    };
  });
}

/** `/^\d{5}$/` as a loop: every priced request checks its ZIP here. */
function isFiveDigits(s: string): boolean {
  if (s.length !== 5) return false;
  for (let i = 0; i < 5; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function planningRegionsOf(meta: TablesMeta): Dataset['planningRegions'] {
  const regions = meta.planningRegions;
  return (zip) =>
    regions === undefined || !Object.hasOwn(regions, zip)
      ? []
      : regions[zip]!.map(([fips, share]) => ({ fips, name: meta.countyNames[fips] ?? fips, residentialShare: share }));
}

function zipResolver(tables: LoadedTables): Dataset['resolveZip'] {
  const { meta } = tables;
  const zipStart = tables.table('zip.start');
  const locCounty = tables.table('loc.county');
  const locArea = tables.table('loc.area');
  const locShare = tables.table('loc.share');
  const locList = tables.table('loc.list');
  const areaState = tables.table('area.state');
  const areaNumber = tables.table('area.number');
  // ZIP locations are immutable: each is made on first use and shared by later requests (a request
  // resolving a ZIP otherwise formatted FIPS codes and looked up county names every time).
  const locations: Array<ZipLocation | undefined> = new Array<ZipLocation | undefined>(locCounty.length).fill(undefined);
  // The list of a ZIP is kept too: every priced request resolves its ZIP, and the list was made anew each time.
  const byZip = new Map<number, readonly ZipLocation[]>();
  return (zip) => {
    if (!isFiveDigits(zip)) return null;
    const z = Number(zip);
    const from = zipStart[z]!;
    const to = zipStart[z + 1]!;
    if (to === from) return null;
    const known = byZip.get(z);
    if (known !== undefined) return known;
    const out: ZipLocation[] = [];
    for (let i = from; i < to; i++) {
      let loc = locations[i];
      if (loc === undefined) {
        const fips = String(locCounty[i]).padStart(5, '0');
        const ai = locArea[i]!;
        locations[i] = loc = {
          zip,
          state: meta.states[areaState[ai]!]!,
          countyFips: fips,
          countyName: meta.countyNames[fips] ?? fips,
          ratingArea: areaNumber[ai]!,
          areaIndex: ai,
          residentialShare: locShare[i]!,
          listId: locList[i]!,
          primary: i === from,
        };
      }
      out.push(loc);
    }
    byZip.set(z, Object.freeze(out));
    return out;
  };
}

function premiumLookup(
  tables: LoadedTables,
  planIndexMap: ReadonlyMap<string, number>,
  areaIndexMap: ReadonlyMap<string, number>,
  summaries: readonly PlanSummaryFields[],
  planPairStart: Uint32Array,
): Dataset['premium'] {
  const pairArea = tables.table('pair.area');
  const pairCents = tables.table('pair.cents');
  /** The pair row of (plan, area), or -1: a plan is priced in a few dozen areas at most. */
  const pairOf = (plan: number, area: number): number => {
    for (let i = planPairStart[plan]!, end = planPairStart[plan + 1]!; i < end; i++) if (pairArea[i] === area) return i;
    return -1;
  };
  return (scid, ratingArea, age) => {
    const p = planIndexMap.get(scid);
    if (p === undefined) return null;
    const ai = areaIndexMap.get(`${summaries[p]!.state}:${ratingArea}`);
    if (ai === undefined) return null;
    const pair = pairOf(p, ai);
    if (pair < 0) return null;
    const c = pairCents[pair * AGE_BAND_COUNT + ageBand(age)]!;
    return c === 0 ? null : c / 100;
  };
}

function slcspLookup(tables: LoadedTables, areaIndexMap: ReadonlyMap<string, number>): Dataset['slcsp'] {
  const slcspCents = tables.table('slcsp.cents');
  const slcspSource = tables.table('slcsp.source');
  return (state, ratingArea, age) => {
    const ai = areaIndexMap.get(`${state}:${ratingArea}`);
    if (ai === undefined) return null;
    const c = slcspCents[ai * AGE_BAND_COUNT + ageBand(age)]!;
    const s = slcspSource[ai]!;
    if (c === 0 || s === SLCSP_SOURCE.none) return null;
    return { amount: c / 100, source: s === SLCSP_SOURCE.ratePuf ? 'rate_puf' : s === SLCSP_SOURCE.modeled ? 'modeled' : 'benchmark_only' };
  };
}
