/** @module Builds the fixture dataset (test/helpers/fixture-inputs.ts) into `dir/builds`: year 2025, and more years on request. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildDataset, type BuildResult } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { writeFixtureInputs } from './fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Returns the builds root; `alsoYears` are built from the same fixture inputs into it after 2025. */
export async function buildFixture(dir: string, alsoYears: readonly number[] = []): Promise<string> {
  for (const year of [2025, ...alsoYears]) {
    const f = year === 2025 ? writeFixtureInputs(join(dir, 'in')) : writeFixtureInputs(join(dir, `in-${year}`), year);
    await buildFixtureInputs(dir, year, f.sourcesFile);
  }
  return join(dir, 'builds');
}

/** Builds `year` offline from the fixture inputs `sourcesFile` lists, into `buildsRoot` (cache: `dir/cache`). */
export function buildFixtureInputs(dir: string, year: number, sourcesFile: string, buildsRoot = join(dir, 'builds')): Promise<BuildResult> {
  return buildDataset({
    year,
    root: ROOT,
    buildsRoot,
    cacheDir: join(dir, 'cache'),
    sourcesFile,
    offline: true,
    progress: createProgress({ tty: false, quiet: true }),
  });
}

/**
 * The fixture build of a test file, in a temporary directory named after `prefix`: built before the
 * file's tests and removed after them. Its members are set once the `before` hook has run.
 */
export function fixtureBuildForFile(prefix: string): { readonly dir: string; readonly builds: string } {
  const made = { dir: '', builds: '' };
  before(async () => {
    made.dir = mkdtempSync(join(tmpdir(), prefix));
    made.builds = await buildFixture(made.dir);
  });
  after(() => rmSync(made.dir, { recursive: true, force: true }));
  return made;
}
