/** @module Builds the fixture dataset (test/helpers/fixture-inputs.ts) into `dir/builds` for year 2025. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { writeFixtureInputs } from './fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Returns the builds root. */
export async function buildFixture(dir: string): Promise<string> {
  const f = writeFixtureInputs(join(dir, 'in'));
  await buildDataset({
    year: 2025,
    root: ROOT,
    buildsRoot: join(dir, 'builds'),
    cacheDir: join(dir, 'cache'),
    sourcesFile: f.sourcesFile,
    offline: true,
    progress: createProgress({ tty: false, quiet: true }),
  });
  return join(dir, 'builds');
}
