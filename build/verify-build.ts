/**
 * @module The last step of a build before publication: open it exactly as a server will (checksums
 * included) and compare what it answers with the manifest.
 */
import type { BuildManifest } from '../src/engine/manifest.ts';
import { openDataset, type Dataset } from '../src/engine/dataset.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';

/** Opens the finished build the way a server will and checks it against the manifest. */
export function verifyBuild(dir: string, manifest: BuildManifest): void {
  let ds: Dataset;
  try {
    // Checksums too: this proves the sums just recorded match the bytes a server will map.
    ds = openDataset(dir, { checksums: 'always', expectedHash: manifest.build_hash });
  } catch (err) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.verify, `verification failed: the new build does not open: ${(err as Error).message}`);
  }
  try {
    const problems: string[] = [];
    if (ds.buildHash !== manifest.build_hash) problems.push('build hash differs from the manifest');
    if (ds.planCount !== manifest.counts.plans) problems.push(`plan count ${ds.planCount} ≠ ${manifest.counts.plans}`);
    if (ds.zipCount !== manifest.counts.zips) problems.push(`ZIP count ${ds.zipCount} ≠ ${manifest.counts.zips}`);
    const someZip = ds.sampleZip();
    if (someZip !== null && ds.resolveZip(someZip) === null) problems.push(`ZIP ${someZip} does not resolve`);
    const firstPlan = ds.planIds()[0];
    if (firstPlan !== undefined && ds.planRecord(`${firstPlan}-01`) === undefined && ds.planRecord(`${firstPlan}-00`) === undefined) {
      problems.push(`plan ${firstPlan} has no detail record`);
    }
    if (problems.length > 0) throw new FatalBuildError(DIAGNOSTIC_CODES.verify, `verification failed: ${problems.join('; ')}`);
  } finally {
    ds.close();
  }
}
