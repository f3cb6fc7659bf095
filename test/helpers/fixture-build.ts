/** @module Builds the fixture dataset (test/helpers/fixture-inputs.ts) into `dir/builds`: year 2025, and more years on request. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { writeFixtureInputs } from './fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Returns the builds root; `alsoYears` are built from the same fixture inputs into it after 2025. */
export async function buildFixture(dir: string, alsoYears: readonly number[] = []): Promise<string> {
  for (const year of [2025, ...alsoYears]) {
    const f = year === 2025 ? writeFixtureInputs(join(dir, 'in')) : writeFixtureInputs(join(dir, `in-${year}`), year);
    await buildDataset({
      year,
      root: ROOT,
      buildsRoot: join(dir, 'builds'),
      cacheDir: join(dir, 'cache'),
      sourcesFile: f.sourcesFile,
      offline: true,
      progress: createProgress({ tty: false, quiet: true }),
    });
  }
  return join(dir, 'builds');
}
