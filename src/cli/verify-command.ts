/**
 * @module `hpd verify`: check builds on demand against the sizes and SHA-256 sums in their manifests.
 *
 * The server hashes a build once, when it first adopts it; files damaged afterwards (disk errors, a
 * stray copy) are only found by checking again, which is what this command is for (e.g. from cron).
 * It reads only: a damaged build is reported, never repaired here (`hpd build` repairs it).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalogYears, matchBuilds } from '../../build/build-catalog.ts';
import { currentHash } from '../engine/build-format.ts';
import { BuildIntegrityError, checkBuild } from '../engine/build-integrity.ts';
import { buildsRoot } from './paths.ts';
import { parseCommandArgs } from './args.ts';
import { planYearArg } from './plan-year-arg.ts';
import { CliError, UsageError } from './usage-error.ts';

export const VERIFY_USAGE = `Usage: hpd verify [--year YEAR] [--all | --hash HASH] [--out DIR] [--json]

Checks builds against their manifests: manifest.json against SHA256SUMS, its build hash against the
directory name, and every file (data.mdb, tables.bin) against the size and SHA-256 recorded when it was
built. By default the current build of every year. Prints one line per build and exits 0 when every
build checked is intact, 1 otherwise (builds from before checksums count as failures: rebuild them).

Options:
  --year YEAR   only this plan year
  --all         every build directory of the year(s), not only the current one
  --hash HASH   only the build with this hash (or a unique prefix of it)
  --out DIR     builds directory (default data/builds, or $HPD_DATA_DIR), as for hpd build
  --json        print a JSON array on stdout: { year, hash, current, ok, error, bytes, seconds } per build`;

interface Target {
  readonly year: number;
  /** Directory name inside the year (a build hash, or a staged directory `current` names). */
  readonly name: string;
  readonly current: boolean;
}

interface Outcome {
  readonly year: number;
  readonly hash: string;
  readonly current: boolean;
  readonly ok: boolean;
  readonly error: string | null;
  readonly bytes: number;
  readonly seconds: number;
}

/** Verifies one build with its checksums; a damaged build is an outcome, not an error. */
function checkTarget(root: string, t: Target): Outcome {
  const started = performance.now();
  const outcome = { year: t.year, hash: t.name, current: t.current };
  try {
    const check = checkBuild(join(root, String(t.year), t.name), { checksums: true });
    return {
      ...outcome,
      ok: check.legacy === null,
      error: check.legacy,
      bytes: check.bytes,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (err) {
    if (!(err instanceof BuildIntegrityError)) throw err;
    return { ...outcome, ok: false, error: err.message, bytes: 0, seconds: (performance.now() - started) / 1000 };
  }
}

export async function verifyCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseCommandArgs('verify', argv, {
    year: { type: 'string' },
    all: { type: 'boolean' },
    hash: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean' },
  }).values;
  const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
  const values = {
    year: str(parsed.year),
    all: parsed.all === true,
    hash: str(parsed.hash),
    out: str(parsed.out),
    json: parsed.json === true,
  };
  const year = values.year === undefined ? undefined : planYearArg(values.year, '--year');
  if (values.hash !== undefined && !/^[0-9a-f]{4,64}$/.test(values.hash))
    throw new UsageError(`--hash must be a build hash or a prefix of at least 4 hex digits, got "${values.hash}"`);
  if (values.hash !== undefined && values.all === true) throw new UsageError('--hash and --all exclude each other');
  const root = values.out !== undefined ? resolve(values.out) : buildsRoot();

  const years = year !== undefined ? [year] : catalogYears(root);
  const targets: Target[] = [];
  const dangling: Outcome[] = [];
  for (const y of years) {
    const dir = join(root, String(y));
    if (!existsSync(dir)) continue;
    const current = currentHash(root, y);
    const names = matchBuilds(root, y, '');
    let chosen: string[];
    if (values.hash !== undefined) chosen = matchBuilds(root, y, values.hash);
    else if (values.all === true) chosen = current !== null && !names.includes(current) ? [...names, current] : names;
    else chosen = current === null ? [] : [current];
    for (const name of chosen) {
      if (name === current && !existsSync(join(dir, name))) {
        dangling.push({
          year: y,
          hash: name,
          current: true,
          ok: false,
          error: new BuildIntegrityError(`${y}/current`, 'current', `points at ${name}, which does not exist`).message,
          bytes: 0,
          seconds: 0,
        });
        continue;
      }
      targets.push({ year: y, name, current: name === current });
    }
  }
  if (values.hash !== undefined && targets.length > 1)
    throw new CliError(`hash prefix ${values.hash} matches ${targets.length} builds; give more digits`);
  if (targets.length === 0 && dangling.length === 0) {
    const what = values.hash !== undefined ? `no build ${values.hash}` : `no ${values.all === true ? '' : 'current '}build`;
    throw new CliError(`${what} under ${year !== undefined ? join(root, String(year)) : root}`);
  }

  const outcomes: Outcome[] = [...dangling];
  for (const t of targets) outcomes.push(checkTarget(root, t));
  outcomes.sort((a, b) => a.year - b.year || Number(b.current) - Number(a.current) || a.hash.localeCompare(b.hash));

  if (values.json === true) {
    process.stdout.write(
      `${JSON.stringify(
        outcomes.map((o) => ({ ...o, seconds: Math.round(o.seconds * 1000) / 1000 })),
        null,
        2,
      )}\n`,
    );
  } else {
    for (const o of outcomes) {
      const tag = `build ${o.year}/${o.hash.slice(0, 12)}${o.current ? ' (current)' : ''}`;
      process.stdout.write(
        o.ok ? `ok: ${tag}: ${(o.bytes / 1e6).toFixed(1)} MB, sha256 in ${o.seconds.toFixed(2)} s\n` : `FAILED: ${o.error}\n`,
      );
    }
  }
  return outcomes.every((o) => o.ok) ? 0 : 1;
}
