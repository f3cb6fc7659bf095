/**
 * @module Two builds of year 2025 in one builds root: the fixture (A) and a modified copy (B) whose
 * differences are few and known, so `hpd builds diff` figures can be checked by hand. B is built last
 * and is current. What B changes (see {@link MODIFIED}):
 * - plan 11111TX0010005 (Lone Star Catastrophic) removed; 22222TX0020004 (Gulf Gold 1500) added;
 *   11111TX0010004 (Lone Star Gold 1000) deductible $1,000 → $1,500;
 * - the AK rating area 1 benchmark 606 → 666.60 (+10 %), so every AK premium there rises 10 %;
 * - ZIP 77477 loses its Harris County (area 10) location, keeping Fort Bend (area 26);
 * - Honolulu County HI moves from rating area 1 to 2 (HI has no plans: benchmark-only SLCSP).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import {
  countyRatingAreasCsv,
  FIXTURE_BENCHMARKS_2025,
  FIXTURE_PLANS,
  hudCsv,
  planAttributesCsv,
  writeFixtureInputs,
  type FixturePlan,
} from './fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ADDED: FixturePlan = {
  scid: '22222TX0020004',
  state: 'TX',
  issuerId: '22222',
  issuer: 'Gulf Coast Care',
  metal: 'Gold',
  type: 'PPO',
  serviceArea: 'TXS002',
  deductible: '$1,500',
  moop: '$8,000',
  name: 'Gulf Gold 1500',
};

export const MODIFIED = {
  removed: '11111TX0010005',
  added: ADDED.scid,
  deductibleChanged: '11111TX0010004',
  benchmarkAk1: { before: 606, after: 666.6 },
  zipMoved: '77477',
  countyMoved: '15003',
} as const;

export interface TwoBuilds {
  readonly root: string;
  readonly hashA: string;
  readonly hashB: string;
}

export async function buildTwoFixtures(dir: string): Promise<TwoBuilds> {
  const root = join(dir, 'builds');
  const progress = createProgress({ tty: false, quiet: true });
  const build = async (inputsDir: string, opts: Parameters<typeof writeFixtureInputs>[2]): Promise<string> => {
    const f = writeFixtureInputs(join(dir, inputsDir), 2025, opts);
    const r = await buildDataset({
      year: 2025,
      root: ROOT,
      buildsRoot: root,
      cacheDir: join(dir, 'cache'),
      sourcesFile: f.sourcesFile,
      offline: true,
      progress,
    });
    return r.manifest.build_hash;
  };
  const hashA = await build('in-a', {});
  const plans = FIXTURE_PLANS.filter((p) => p.scid !== MODIFIED.removed).map((p) =>
    p.scid === MODIFIED.deductibleChanged ? { ...p, deductible: '$1,500' } : p,
  );
  const hashB = await build('in-b', {
    planAttributes: planAttributesCsv(2025, [...plans, ADDED]),
    benchmarks: { ...FIXTURE_BENCHMARKS_2025, 'AK:1': MODIFIED.benchmarkAk1.after },
    hud: hudCsv().replace('\r\n77477,48201,STAFFORD,TX,0.300000000,0.500000000,0.000000000,0.320000000', ''),
    countyRatingAreas: countyRatingAreasCsv().replace('HONOLULU_COUNTY_HI,1', 'HONOLULU_COUNTY_HI,2'),
  });
  return { root, hashA, hashB };
}
