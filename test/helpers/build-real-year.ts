/**
 * @module Builds a plan year from the repository's own sources file and the shared data folder (the
 * real files, not fixtures) into a temporary builds root: PY2024 takes ~2 s, PY2025 ~10 s.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset, type BuildResult } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';

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
