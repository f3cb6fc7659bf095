/**
 * @module The builds of a builds root as an operator sees them: every complete `<year>/<hash>`
 * directory with its manifest summary, size on disk, whether `current` names it and whether it passes
 * the integrity check; resolving a hash prefix; choosing what `hpd builds prune` may remove.
 *
 * Reads only. Temporary (`.tmp-…`) and moved-aside (`.corrupt-…`) directories are not builds: they are
 * listed separately as leftovers, which only the cleanup in publish.ts decides to remove.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BuildIntegrityError, checkBuild } from '../src/engine/build-integrity.ts';
import { MANIFEST_FILE } from '../src/engine/build-format.ts';
import type { BuildManifest } from '../src/engine/manifest.ts';
import { currentHash, yearDir } from './publish.ts';

const HASH_RE = /^[0-9a-f]{64}$/;

export interface CatalogInput {
  readonly name: string;
  readonly file: string;
  readonly sha256: string;
}

export interface CatalogCounts {
  readonly plans: number;
  readonly variants: number;
  readonly zips: number;
  readonly rating_areas: number;
  readonly states: number;
}

/** One build directory of a year. */
export interface CatalogEntry {
  readonly year: number;
  /** Directory name: the build hash (or a staged directory that `current` names after a killed publish). */
  readonly hash: string;
  readonly dir: string;
  readonly current: boolean;
  /** ISO time the compiler recorded; the directory's mtime when the manifest is unreadable. */
  readonly created: string;
  readonly compiler_version: string | null;
  readonly format_version: number | null;
  readonly data_source: string | null;
  readonly inputs: readonly CatalogInput[];
  readonly counts: CatalogCounts | null;
  /** Bytes of every file in the directory (apparent sizes, as `du --apparent-size`). */
  readonly bytes: number;
  /** True when the check passed: sizes by default, SHA-256 sums too with `verify`. */
  readonly ok: boolean;
  /** Checksummed files (`sha256`) or sizes only (`sizes`). */
  readonly checked: 'sizes' | 'sha256';
  /** One line: why the check failed, or why a format 1 build could not be checksummed. */
  readonly problem: string | null;
}

export interface CatalogOptions {
  readonly year?: number;
  /** Hash every file (otherwise sizes and the manifest's own sum only, which is instant). */
  readonly verify?: boolean;
}

/** Plan years present under the builds root, ascending. */
export function catalogYears(root: string): number[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((n) => /^\d{4}$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

/** Bytes of the regular files directly in a build directory (builds have no subdirectories). */
export function directoryBytes(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    const st = lstatSync(join(dir, name));
    if (st.isFile()) bytes += st.size;
    else if (st.isDirectory()) bytes += directoryBytes(join(dir, name));
  }
  return bytes;
}

/** Every complete build of the year(s), newest first within a year, years descending. */
export function listBuilds(root: string, opts: CatalogOptions = {}): CatalogEntry[] {
  const years = opts.year !== undefined ? [opts.year] : catalogYears(root).reverse();
  const out: CatalogEntry[] = [];
  for (const year of years) out.push(...listYear(root, year, opts.verify === true));
  return out;
}

function listYear(root: string, year: number, verify: boolean): CatalogEntry[] {
  const yd = yearDir(root, year);
  if (!existsSync(yd)) return [];
  const current = currentHash(root, year);
  const names = readdirSync(yd).filter((n) => HASH_RE.test(n) && statSync(join(yd, n), { throwIfNoEntry: false })?.isDirectory() === true);
  // After a killed publication `current` may name its staged directory: complete and verified, so listed.
  if (current !== null && !names.includes(current) && existsSync(join(yd, current))) names.push(current);
  const entries = names.map((name) => describe(yd, year, name, name === current, verify));
  return entries.sort((a, b) => b.created.localeCompare(a.created) || a.hash.localeCompare(b.hash));
}

function describe(yd: string, year: number, name: string, current: boolean, verify: boolean): CatalogEntry {
  const dir = join(yd, name);
  let manifest: BuildManifest | null = null;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as BuildManifest;
  } catch {
    // reported through the integrity check below
  }
  let ok = false;
  let problem: string | null = null;
  try {
    const check = checkBuild(dir, { checksums: verify, expectedHash: HASH_RE.test(name) ? name : undefined });
    ok = check.legacy === null;
    problem = check.legacy;
  } catch (err) {
    if (!(err instanceof BuildIntegrityError)) throw err;
    problem = err.message;
  }
  const counts = manifest?.counts;
  return {
    year,
    hash: name,
    dir,
    current,
    created: typeof manifest?.built_at === 'string' ? manifest.built_at : statSync(dir).mtime.toISOString(),
    compiler_version: typeof manifest?.compiler_version === 'string' ? manifest.compiler_version : null,
    format_version: typeof manifest?.format_version === 'number' ? manifest.format_version : null,
    data_source: typeof manifest?.data_source === 'string' ? manifest.data_source : null,
    inputs: Array.isArray(manifest?.inputs)
      ? manifest.inputs.map((i) => ({ name: i.name, file: i.path.split('/').pop() ?? i.path, sha256: i.sha256 }))
      : [],
    counts:
      counts === undefined
        ? null
        : {
            plans: counts.plans,
            variants: counts.plan_variants,
            zips: counts.zips,
            rating_areas: counts.rating_areas,
            states: counts.states_with_plans,
          },
    bytes: directoryBytes(dir),
    ok,
    checked: verify ? 'sha256' : 'sizes',
    problem,
  };
}

/** Hash directories of a year whose name starts with `prefix` (exact match first). */
export function matchBuilds(root: string, year: number, prefix: string): string[] {
  const yd = yearDir(root, year);
  if (!existsSync(yd)) return [];
  const names = readdirSync(yd).filter((n) => HASH_RE.test(n));
  if (names.includes(prefix)) return [prefix];
  return names.filter((n) => n.startsWith(prefix));
}

/**
 * What prune removes from one year's entries (newest first): all but the `keep` newest, never the
 * current one. The current build does not use up one of the `keep` places: an operator who rolled back
 * keeps the newer builds they may want to return to.
 */
export function pruneCandidates(entries: readonly CatalogEntry[], keep: number): CatalogEntry[] {
  return entries.filter((e, i) => i >= keep && !e.current);
}
