/**
 * @module On-disk layout of a compiled build, shared by the compiler (writer) and the engine (reader).
 *
 * A build directory holds `manifest.json`, an LMDB file (records read one at a time: plan details,
 * geography, issuers, crosswalk) and `tables.bin`, a container of typed arrays that the engine maps
 * into RAM in one read with zero copies: ZIP → locations, plan × rating area × age premiums, plan
 * lists per location pre-sorted by every sort key, SLCSP per rating area × age. The container is a
 * magic, a JSON directory (names, types, offsets, small string tables) and 8-byte aligned arrays.
 */
import { closeSync, fstatSync, openSync, readlinkSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { InvariantError } from '../invariant.ts';
import type { DentalAreaRates, DentalOffer, DentalStateRecord } from './dental-record.ts';
import { METAL_LEVELS, PLAN_TYPES } from './plan-record.ts';

/** The symlink in `<builds root>/<year>/` naming the directory of the build being served. */
export const CURRENT_LINK = 'current';

/** The directory name `<year>/current` points at (normally a build hash), or null when there is none. */
export function currentHash(buildsRoot: string, year: number): string | null {
  try {
    return readlinkSync(join(buildsRoot, String(year), CURRENT_LINK));
  } catch {
    return null;
  }
}

export const MANIFEST_FILE = 'manifest.json';
export const LMDB_FILE = 'data.mdb';
export const TABLES_FILE = 'tables.bin';
/** `sha256sum` lines for the output files and the manifest (see build-integrity.ts). */
export const SUMS_FILE = 'SHA256SUMS';
/**
 * Bumped whenever the layout or the meaning of a table changes; part of the build hash.
 * 2: the manifest lists every output file with its SHA-256 and SHA256SUMS holds the manifest's own
 * sum. The tables and LMDB layout are those of 1, so format 1 builds still open (sizes checked only),
 * while the new hash makes `hpd build` replace them instead of reusing them.
 */
export const FORMAT_VERSION = 2;

const MAGIC = Buffer.from('HPDTBL01', 'latin1');

/** LMDB sub-databases. */
export const DB = {
  plans: 'plans',
  zips: 'zips',
  counties: 'counties',
  issuers: 'issuers',
  crosswalk: 'crosswalk',
  benefits: 'benefits',
  familyTiers: 'family-tiers',
  /** Stand-alone dental plans, apart from the medical ones: see dental-record.ts. */
  dentalPlans: 'dental-plans',
  /** County FIPS → the dental plan variants offered there ({@link DentalOffer}[]). */
  dentalOffers: 'dental-offers',
  /** Dental standard component id → its Rate PUF rates by rating area ({@link DentalAreaRates}[]). */
  dentalRates: 'dental-rates',
  /** State → whether its dental premiums are loaded ({@link DentalStateRecord}). */
  dentalStates: 'dental-states',
} as const;

/** Open options both sides must agree on (lmdb-js refuses mismatched structures otherwise). */
export const LMDB_OPTIONS = {
  noSubdir: true,
  compression: false,
  sharedStructuresKey: Symbol.for('hpd.structures'),
  useVersions: false,
  maxDbs: 16,
} as const;

export const NO_LIST = 0xffff_ffff;
/** Sentinel for a missing money value in Float64 columns (no NaN anywhere in a build). */
export const NULL_MONEY = -1;

/** SLCSP provenance per rating area. */
export const SLCSP_SOURCE = {
  none: 0,
  /** Second-lowest silver of a real Rate PUF. */
  ratePuf: 1,
  /** Second-lowest silver of modeled premiums, equal to the benchmark table by construction. */
  modeled: 2,
  /** Benchmark table only (no plan data in the state): KFF-derived approximation. */
  benchmarkOnly: 3,
} as const;

/** Metal level and plan type codes in the tables: the index into these lists (the record's own order). */
export const METAL_CODES = METAL_LEVELS;
export const PLAN_TYPE_CODES = PLAN_TYPES;

export const PLAN_FLAG = {
  childOnly: 1,
  onExchange: 2,
  nationalNetwork: 4,
  hsaEligible: 8,
} as const;

/**
 * Every table of the container with its array type: the compiler must write exactly these (a missing
 * or mistyped table is a type error in build/tables/assemble.ts) and the engine reads them by name
 * through {@link LoadedTables.table}, typed from the same declaration.
 */
export const TABLES = {
  'area.state': Uint8Array,
  'area.number': Uint16Array,
  'zip.start': Uint32Array,
  'loc.county': Uint32Array,
  'loc.area': Uint16Array,
  'loc.share': Float32Array,
  'loc.list': Uint32Array,
  'plan.metal': Uint8Array,
  'plan.type': Uint8Array,
  'plan.state': Uint8Array,
  'plan.issuer': Uint16Array,
  'plan.flags': Uint8Array,
  'plan.deductible': Float64Array,
  'plan.moop': Float64Array,
  'pair.plan': Uint32Array,
  'pair.area': Uint16Array,
  'pair.cents': Uint32Array,
  'list.start': Uint32Array,
  'list.area': Uint16Array,
  'entry.plan': Uint32Array,
  'entry.pair': Uint32Array,
  'order.name': Uint16Array,
  'order.deductible': Uint16Array,
  'order.moop': Uint16Array,
  'order.premium-ref': Uint32Array,
  'order.premium-pool': Uint16Array,
  'slcsp.cents': Uint32Array,
  'slcsp.source': Uint8Array,
} as const;

export type TableName = keyof typeof TABLES;
/** The array a table constructor makes, over any buffer (the engine's are shared, the compiler's not). */
type ArrayOf<C> = C extends Uint8ArrayConstructor
  ? Uint8Array
  : C extends Uint16ArrayConstructor
    ? Uint16Array
    : C extends Uint32ArrayConstructor
      ? Uint32Array
      : C extends Float32ArrayConstructor
        ? Float32Array
        : C extends Float64ArrayConstructor
          ? Float64Array
          : never;
/** The arrays of a whole container, each of its declared type. */
export type TableArrays = { readonly [K in TableName]: ArrayOf<(typeof TABLES)[K]> };

/**
 * Key of a (plan, rating area) premium pair in lookups: a build has fewer than 4,096 areas (500 in
 * PY2025), so the pair fits one small integer.
 */
export function pairKey(plan: number, area: number): number {
  return plan * 4096 + area;
}

/** Small string tables carried in the container's JSON directory. */
export interface TablesMeta {
  readonly year: number;
  readonly buildHash: string;
  /** State index → code. */
  readonly states: readonly string[];
  /** Plan index → standard component id. */
  readonly plans: readonly string[];
  /** Plan index → -01 variant display fields needed on the hot path. */
  readonly planNames: readonly string[];
  /** Issuer index → { id, name }. */
  readonly issuers: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  /** County FIPS → name. */
  readonly countyNames: Readonly<Record<string, string>>;
  /**
   * Connecticut ZIP → its 2022 planning regions as [FIPS, residential share], most addresses first
   * (build/geo/geography.ts); absent in builds compiled before CT ZIPs were placed by legacy county.
   */
  readonly planningRegions?: Readonly<Record<string, ReadonlyArray<readonly [string, number]>>>;
}

export type TypedArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

const TYPES = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f32: Float32Array,
  f64: Float64Array,
} as const;
type TypeName = keyof typeof TYPES;

function typeName(a: TypedArray): TypeName {
  if (a instanceof Uint8Array) return 'u8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof Float32Array) return 'f32';
  return 'f64';
}

interface Directory {
  readonly meta: TablesMeta;
  readonly arrays: Record<string, { type: TypeName; offset: number; length: number }>;
}

/** Writes the container. */
export function writeTables(path: string, meta: TablesMeta, arrays: TableArrays): number {
  const entries = Object.entries(arrays);
  const dir: Directory = { meta, arrays: {} };
  // Offsets are relative to the end of the directory, so they do not depend on its length.
  let offset = 0;
  for (const [name, a] of entries) {
    dir.arrays[name] = { type: typeName(a), offset, length: a.length };
    offset += align8(a.byteLength);
  }
  const json = Buffer.from(JSON.stringify(dir), 'utf8');
  const headerLen = align8(MAGIC.length + 4 + json.length);
  const header = Buffer.alloc(headerLen);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(json.length, MAGIC.length);
  json.copy(header, MAGIC.length + 4);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    const pad = Buffer.alloc(8);
    for (const [, a] of entries) {
      writeSync(fd, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      const extra = align8(a.byteLength) - a.byteLength;
      if (extra > 0) writeSync(fd, pad, 0, extra);
    }
  } finally {
    closeSync(fd);
  }
  return headerLen + offset;
}

export interface LoadedTables {
  readonly meta: TablesMeta;
  readonly bytes: number;
  /** The whole container: shared, so REST worker threads attach to the one copy instead of reading their own. */
  readonly buffer: SharedArrayBuffer;
  get<T extends TypedArray>(name: string, kind: new (buffer: SharedArrayBuffer, byteOffset: number, length: number) => T): T;
  /** A declared table ({@link TABLES}), typed from its declaration. */
  table<K extends TableName>(name: K): TableArrays[K];
}

/**
 * Reads the container into one shared buffer and returns typed-array views on it.
 * @param damaged makes the error for a file that is not a whole container (the caller knows the build).
 */
export function readTables(path: string, damaged: (problem: string) => Error): LoadedTables {
  const fd = openSync(path, 'r');
  let buffer: SharedArrayBuffer;
  try {
    const size = fstatSync(fd).size;
    buffer = new SharedArrayBuffer(size);
    const bytes = new Uint8Array(buffer);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, bytes, at, size - at, at);
      if (n === 0) throw damaged('file shrank while it was read');
      at += n;
    }
  } finally {
    closeSync(fd);
  }
  return attachTables(buffer, path, damaged);
}

/** Typed-array views on a container already in memory (`label` names it in errors). */
export function attachTables(buffer: SharedArrayBuffer, label: string, damaged: (problem: string) => Error): LoadedTables {
  const buf = Buffer.from(buffer);
  if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw damaged('not a tables container (bad magic)');
  }
  const jsonLen = buf.readUInt32LE(MAGIC.length);
  const dir = JSON.parse(buf.toString('utf8', MAGIC.length + 4, MAGIC.length + 4 + jsonLen)) as Directory;
  const base = align8(MAGIC.length + 4 + jsonLen);
  return {
    meta: dir.meta,
    bytes: buf.length,
    buffer,
    get(name, kind) {
      const e = dir.arrays[name];
      // The container's format version was checked with the manifest: its directory matches TABLES.
      if (e === undefined) throw new InvariantError(`${label}: no table ${name}`);
      const Ctor = TYPES[e.type];
      if ((Ctor as unknown) !== kind) throw new InvariantError(`${label}: table ${name} is ${e.type}`);
      return new kind(buffer, base + e.offset, e.length);
    },
    table(name) {
      return this.get(
        name,
        TABLES[name] as unknown as new (
          buffer: SharedArrayBuffer,
          byteOffset: number,
          length: number,
        ) => TableArrays[typeof name],
      );
    },
  };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
