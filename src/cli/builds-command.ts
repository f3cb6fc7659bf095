/**
 * @module `hpd builds`: the builds of each plan year as an operator sees them, switching `current`
 * between them, removing old ones and comparing two of them before a switch.
 *
 * `use` changes only the `current` symlink (atomically, with publish.ts's switchCurrent) after the
 * target passed a full checksum check; a running server notices the new link by itself. `prune` never
 * removes the build `current` names, re-reading the link just before each removal.
 */
import { renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalogYears, listBuilds, matchBuilds, pruneCandidates, type CatalogEntry } from '../../build/build-catalog.ts';
import { currentHash, removeStaleTmpDirs, switchCurrent, yearDir } from '../../build/publish.ts';
import { diffBuilds } from '../engine/build-diff.ts';
import { BuildIntegrityError, checkBuild } from '../engine/build-integrity.ts';
import { openCurrentDataset, openDataset, type Dataset } from '../engine/dataset.ts';
import { renderBuildDiff } from './build-diff-text.ts';
import { buildsRoot } from './paths.ts';
import { parseCommandArgs, unknownSubcommand } from './args.ts';
import { planYearArg } from './plan-year-arg.ts';
import { CliError, UsageError } from './usage-error.ts';

export const BUILDS_USAGE = `Usage: hpd builds <list|use|prune|diff> [options]

  hpd builds list [--year YEAR] [--verify] [--json]
      every build of each year, newest first: hash, creation time, compiler, inputs (sha256 prefixes),
      counts, size on disk, which one is current, and whether it passes the size check (--verify: the
      full SHA-256 check, a few tenths of a second per national build)
  hpd builds use YEAR HASH [--json]
      make a build current (HASH may be a unique prefix): its checksums are verified first and a damaged
      build is refused; the symlink is replaced atomically and a running server follows it
  hpd builds prune --keep K [--year YEAR] [--dry-run] [--json]
      remove all but the K newest builds of each year (K >= 1), never the current one, and leftover
      temporary or damaged directories of dead processes; prints what went and the bytes freed
  hpd builds diff A B [--top N] [--json]
      what changes from build A to build B; A and B are YEAR:HASH (hash prefix) or YEAR (its current
      build): plans added / removed / changed per state and issuer, premium change distribution per
      metal level (age 40 in text; 21, 40, 64 in JSON), ZIPs and counties whose rating areas changed,
      SLCSP per rating area at age 40 (the N largest changes in text, default 10; all in JSON)

Options common to all:
  --out DIR   builds directory (default data/builds, or $HPD_DATA_DIR)
  --json      machine-readable output on stdout

Exit codes: 0 success, 1 failure (one line on stderr), 2 usage mistake.`;

const HEX_PREFIX = /^[0-9a-f]{4,64}$/;

function parse(
  command: string,
  argv: readonly string[],
  options: Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>,
): { values: Readonly<Record<string, string | boolean | undefined>>; positionals: readonly string[] } {
  return parseCommandArgs(`builds ${command}`, argv, { ...options, out: { type: 'string' }, json: { type: 'boolean' } }, true);
}

const rootOf = (values: Readonly<Record<string, string | boolean | undefined>>): string =>
  typeof values.out === 'string' ? resolve(values.out) : buildsRoot();
const short = (hash: string): string => hash.slice(0, 12);
const json = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export async function buildsCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'list') return listCommand(rest);
  if (sub === 'use') return useCommand(rest);
  if (sub === 'prune') return pruneCommand(rest);
  if (sub === 'diff') return diffCommand(rest);
  if (sub === undefined) throw new UsageError('hpd builds needs a subcommand: list, use, prune or diff');
  throw unknownSubcommand('builds', sub, ['list', 'use', 'prune', 'diff']);
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function listCommand(argv: readonly string[]): number {
  const { values, positionals } = parse('list', argv, { year: { type: 'string' }, verify: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const year = typeof values.year === 'string' ? planYearArg(values.year, '--year') : undefined;
  const root = rootOf(values);
  const entries = listBuilds(root, { year, verify: values.verify === true });
  if (values.json === true) {
    json(entries);
    return entries.every((e) => e.ok) ? 0 : 1;
  }
  if (entries.length === 0) throw new CliError(`no builds under ${year !== undefined ? join(root, String(year)) : root}`);
  // One write: `hpd builds list | head` then closes the pipe after the whole text was handed over,
  // instead of failing with EPIPE on a later line.
  const out: string[] = [];
  let lastYear: number | null = null;
  for (const e of entries) {
    if (e.year !== lastYear) {
      out.push(`${lastYear === null ? '' : '\n'}${e.year}:\n`);
      lastYear = e.year;
    }
    const state = e.ok ? `ok (${e.checked})` : e.problem?.includes('no checksums') ? 'no checksums (rebuild)' : 'DAMAGED';
    out.push(
      `${e.current ? '*' : ' '} ${short(e.hash)}  ${e.created}  ${mb(e.bytes).padStart(9)}  ${state}${e.current ? '  current' : ''}\n`,
    );
    const c = e.counts;
    if (c !== null)
      out.push(
        `    ${c.plans} plans, ${c.variants} variants, ${c.zips} ZIPs, ${c.rating_areas} rating areas, ${c.states} states; compiler ${e.compiler_version ?? '?'}, format ${e.format_version ?? '?'}, ${e.data_source ?? '?'}\n`,
      );
    if (e.inputs.length > 0) out.push(`    inputs: ${e.inputs.map((i) => `${i.file} ${i.sha256.slice(0, 8)}`).join(', ')}\n`);
    if (!e.ok && e.problem !== null) out.push(`    ${e.problem}\n`);
  }
  process.stdout.write(out.join(''));
  return entries.every((e) => e.ok) ? 0 : 1;
}

/** The build directory name a prefix names in a year: exactly one, else a one-line CliError. */
function resolveHash(root: string, year: number, prefix: string): string {
  if (!HEX_PREFIX.test(prefix)) throw new UsageError(`a build hash must be at least 4 hex digits, got "${prefix}"`);
  const found = matchBuilds(root, year, prefix);
  if (found.length === 0) throw new CliError(`no build ${prefix} under ${yearDir(root, year)}`);
  if (found.length > 1)
    throw new CliError(
      `hash prefix ${prefix} matches ${found.length} builds of ${year} (${found.map(short).join(', ')}); give more digits`,
    );
  return found[0]!;
}

function useCommand(argv: readonly string[]): number {
  const { values, positionals } = parse('use', argv, {});
  if (positionals.length !== 2) throw new UsageError('usage: hpd builds use YEAR HASH');
  const year = planYearArg(positionals[0]!, 'YEAR');
  const root = rootOf(values);
  const hash = resolveHash(root, year, positionals[1]!);
  const before = currentHash(root, year);
  // The full check before the switch: a server adopting a damaged build would refuse it (or, before
  // checksums, serve flipped bytes), and the operator is here now to hear about it.
  try {
    const check = checkBuild(join(yearDir(root, year), hash), { checksums: true, expectedHash: hash });
    if (check.legacy !== null) throw new CliError(`refusing ${year}/${short(hash)}: ${check.legacy}`);
  } catch (err) {
    if (err instanceof BuildIntegrityError) throw new CliError(`refusing to make it current: ${err.message}`);
    throw err;
  }
  if (before !== hash) switchCurrent(root, year, hash);
  if (values.json === true) json({ year, before, after: hash, changed: before !== hash });
  else if (before === hash) process.stdout.write(`current ${year}: already ${short(hash)}\n`);
  else process.stdout.write(`current ${year}: ${before === null ? 'none' : short(before)} -> ${short(hash)}\n`);
  return 0;
}

interface Removal {
  readonly year: number;
  readonly name: string;
  readonly bytes: number;
  readonly kind: 'build' | 'leftover';
}

function pruneCommand(argv: readonly string[]): number {
  const { values, positionals } = parse('prune', argv, {
    keep: { type: 'string' },
    year: { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (typeof values.keep !== 'string')
    throw new UsageError('--keep K is required (the number of newest builds to keep per year, at least 1)');
  const keep = Number(values.keep);
  if (!/^\d+$/.test(values.keep) || keep < 1) throw new UsageError(`--keep must be a whole number of at least 1, got "${values.keep}"`);
  const year = typeof values.year === 'string' ? planYearArg(values.year, '--year') : undefined;
  const dryRun = values['dry-run'] === true;
  const root = rootOf(values);
  const years = year !== undefined ? [year] : catalogYears(root);
  const removed: Removal[] = [];
  const kept: Array<{ year: number; hash: string; current: boolean }> = [];
  for (const y of years) {
    const entries = listBuilds(root, { year: y });
    const doomed = new Set(pruneCandidates(entries, keep).map((e) => e.hash));
    for (const e of entries) if (!doomed.has(e.hash)) kept.push({ year: y, hash: e.hash, current: e.current });
    for (const e of entries.filter((x) => doomed.has(x.hash))) {
      if (!dryRun && !removeBuild(root, y, e)) {
        kept.push({ year: y, hash: e.hash, current: true });
        continue;
      }
      removed.push({ year: y, name: e.hash, bytes: e.bytes, kind: 'build' });
    }
    for (const name of removeStaleTmpDirs(root, y, dryRun)) removed.push({ year: y, name, bytes: 0, kind: 'leftover' });
  }
  const freed = removed.reduce((s, r) => s + r.bytes, 0);
  if (values.json === true) {
    json({ dry_run: dryRun, keep, removed, kept, bytes_freed: freed });
    return 0;
  }
  const verb = dryRun ? 'would remove' : 'removed';
  for (const r of removed)
    process.stdout.write(
      `${verb} ${r.year}/${r.kind === 'build' ? short(r.name) : r.name}${r.kind === 'build' ? ` (${mb(r.bytes)})` : ' (leftover)'}\n`,
    );
  process.stdout.write(
    `${dryRun ? 'would free' : 'freed'} ${mb(freed)}; kept ${kept.length} build${kept.length === 1 ? '' : 's'}${
      kept.some((k) => k.current)
        ? ` (current: ${kept
            .filter((k) => k.current)
            .map((k) => `${k.year}/${short(k.hash)}`)
            .join(', ')})`
        : ''
    }\n`,
  );
  return 0;
}

/**
 * Removes one build unless `current` names it now (another process may have switched since the list
 * was read). The directory is first renamed to a `.tmp-` name carrying this pid, so a kill during the
 * recursive delete leaves a leftover the next cleanup removes, never a half-deleted build under its hash.
 * The rename-then-recheck closes most of the race with a concurrent `use`; a server that already mapped
 * the files keeps reading them (unlinked files live on until closed).
 */
function removeBuild(root: string, year: number, e: CatalogEntry): boolean {
  if (currentHash(root, year) === e.hash) return false;
  const aside = join(yearDir(root, year), `.tmp-${e.hash.slice(0, 16)}-${process.pid}-${Date.now()}-prune`);
  renameSync(e.dir, aside);
  if (currentHash(root, year) === e.hash) {
    renameSync(aside, e.dir);
    return false;
  }
  rmSync(aside, { recursive: true, force: true });
  return true;
}

/** `YEAR` or `YEAR:HASH` → an opened dataset (checksums verified on open, as the server does). */
function openRef(root: string, text: string): Dataset {
  const m = /^(\d{4})(?::([0-9a-f]+))?$/.exec(text);
  if (m === null) throw new UsageError(`a build is YEAR or YEAR:HASH (e.g. 2025 or 2025:3fa4c1d2), got "${text}"`);
  const year = planYearArg(m[1]!, 'YEAR');
  if (m[2] === undefined) {
    if (currentHash(root, year) === null) throw new CliError(`no current build under ${yearDir(root, year)}`);
    return openCurrentDataset(root, year);
  }
  const hash = resolveHash(root, year, m[2]);
  return openDataset(join(yearDir(root, year), hash));
}

function diffCommand(argv: readonly string[]): number {
  const { values, positionals } = parse('diff', argv, { top: { type: 'string' } });
  if (positionals.length !== 2) throw new UsageError('usage: hpd builds diff A B (each YEAR or YEAR:HASH)');
  const top = typeof values.top === 'string' ? Number(values.top) : 10;
  if (!Number.isInteger(top) || top < 1 || top > 100_000)
    throw new UsageError(`--top must be a whole number of at least 1, got "${String(values.top)}"`);
  const root = rootOf(values);
  const a = openRef(root, positionals[0]!);
  try {
    const b = openRef(root, positionals[1]!);
    try {
      const diff = diffBuilds(a, b);
      if (values.json === true) json({ ...diff, seconds: Math.round(diff.seconds * 1000) / 1000 });
      else process.stdout.write(`${renderBuildDiff(diff, top)}\n`);
    } finally {
      b.close();
    }
  } finally {
    a.close();
  }
  return 0;
}
