/**
 * @module A second fixture build of the same year whose data differ from the default one (another
 * ImportDate, so another build hash and another `data_freshness`), published into a given builds root,
 * for tests of switching between builds.
 */
import { join } from 'node:path';
import { planAttributesCsv, writeFixtureInputs, type FixtureInputOptions } from './fixture-inputs.ts';
import { buildFixtureInputs } from './fixture-build.ts';

const DEFAULT_IMPORT = '2024-11-20 01:02:03';

/** Builds the fixture with plan data imported on `importDate` (YYYY-MM-DD) into `buildsRoot`; returns the build hash. */
export async function buildFixtureVariant(dir: string, buildsRoot: string, importDate: string): Promise<string> {
  return buildFixtureWith(dir, buildsRoot, `in-${importDate}`, {
    planAttributes: planAttributesCsv(2025).replaceAll(DEFAULT_IMPORT, `${importDate} 01:02:03`),
  });
}

/** Builds the 2025 fixture with some inputs replaced (inputs written under `dir/name`); returns the build hash. */
export async function buildFixtureWith(dir: string, buildsRoot: string, name: string, opts: FixtureInputOptions): Promise<string> {
  const f = writeFixtureInputs(join(dir, name), 2025, opts);
  return (await buildFixtureInputs(dir, 2025, f.sourcesFile, buildsRoot)).manifest.build_hash;
}
