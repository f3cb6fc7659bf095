/**
 * @module Builds a plan year from the repository's own sources file and the shared data folder (the
 * real files, not fixtures) into a temporary builds root: PY2024 takes ~2 s, PY2025 ~10 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildDataset, type BuildResult } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { type DataRegistry, openRegistry } from '../../src/operations/data-registry.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function buildRealYear(dir: string, year: number, sourcesFile?: string): Promise<BuildResult> {
  return buildDataset({
    year,
    root: REPO_ROOT,
    buildsRoot: join(dir, 'builds'),
    cacheDir: join(dir, 'cache'),
    offline: true,
    ...(sourcesFile === undefined ? {} : { sourcesFile }),
    progress: createProgress({ tty: false, quiet: true }),
  });
}

/** The real builds of a test file ({@link realBuildsForFile}): set once the `before` hook has run. */
export interface RealBuilds {
  readonly dir: string;
  readonly builds: string;
  /** What each year's build reported, in the order of `years`. */
  readonly results: readonly BuildResult[];
  /** A registry over the builds, opened on first use and closed after the file's tests. */
  readonly registry: DataRegistry;
}

/**
 * The real builds of `years` for the tests of the calling file, in a temporary directory named after
 * `prefix`: built before the file's tests, removed after them.
 */
export function realBuildsForFile(prefix: string, years: readonly number[], baseUrl = 'http://api.test'): RealBuilds {
  let dir = '';
  const results: BuildResult[] = [];
  let registry: DataRegistry | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    for (const year of years) results.push(await buildRealYear(dir, year));
  });
  after(() => {
    registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get builds() {
      return join(dir, 'builds');
    },
    results,
    get registry() {
      return (registry ??= openRegistry(join(dir, 'builds'), baseUrl, years));
    },
  };
}
