/**
 * @module `hpd sources init`: the sources file of a new plan year, and `--pin`: its checksums.
 *
 * The CMS PUFs of a year follow one official URL pattern (shared/data/README.md §8.1):
 * `https://download.cms.gov/marketplace-puf/<year>/<name>-puf.zip`; the Plan ID Crosswalk from year Y
 * to Y + 1 is published with Y + 1. Their checksums are unknown until the first download, so they are
 * written as null and recorded by `--pin` from the files `hpd build` downloaded into the cache. The
 * inputs that are not per plan year (geography, rating areas, benchmarks) are carried over from the
 * newest existing sources file, URLs and checksums included.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';
import { cacheName, sha256File, type InputSpec, type SourcesFile } from './sources.ts';

const PUF = (year: number, name: string): string => `https://download.cms.gov/marketplace-puf/${year}/${name}-puf.zip`;
const HOME = 'https://www.cms.gov/marketplace/resources/data/public-use-files';

/** The sources file of `year`, from the CMS patterns and the year-independent inputs of `previous`. */
export function initSources(year: number, previous: SourcesFile): SourcesFile {
  const cms = (title: string, required: boolean, url: string): InputSpec => ({
    title,
    required,
    home: HOME,
    url,
    url_sha256: null,
    mirrors: [],
  });
  const inputs: Record<string, InputSpec> = {
    plan_attributes: cms(`CMS Exchange Plan Attributes PUF, PY${year}`, true, PUF(year, 'plan-attributes')),
    service_area: cms(`CMS Exchange Service Area PUF, PY${year}`, true, PUF(year, 'service-area')),
    rates: cms(
      `CMS Exchange Rate PUF, PY${year} (absent: premiums are modeled from SLCSP benchmarks and labelled so)`,
      false,
      PUF(year, 'rate'),
    ),
    benefits: cms(
      `CMS Exchange Benefits and Cost Sharing PUF, PY${year} (optional: per-service cost sharing for OOP estimates)`,
      false,
      PUF(year, 'benefits-and-cost-sharing'),
    ),
    crosswalk: cms(
      `CMS Plan ID Crosswalk PUF, PY${year} to PY${year + 1} (optional: the crosswalk endpoint has no data without it)`,
      false,
      PUF(year + 1, 'plan-id-crosswalk'),
    ),
  };
  for (const [name, spec] of Object.entries(previous.inputs)) if (!(name in inputs)) inputs[name] = spec;
  return {
    year,
    description: `Inputs of the PY${year} build, written by hpd sources init from the CMS URL patterns; the CMS checksums are null until the first download (hpd build --fetch-optional, then hpd sources init --year ${year} --pin). Resolution order per input as in the other years' files.`,
    inputs,
  };
}

/**
 * Records the sha256 of every input downloaded into `<cacheDir>/<year>/`. A checksum already recorded
 * that the file contradicts is an error, never overwritten. Returns the new file and the inputs pinned.
 */
export async function pinSources(sources: SourcesFile, cacheDir: string): Promise<{ sources: SourcesFile; pinned: string[] }> {
  const inputs: Record<string, InputSpec> = {};
  const pinned: string[] = [];
  for (const [name, spec] of Object.entries(sources.inputs)) {
    const cached = spec.url === null ? null : join(cacheDir, String(sources.year), cacheName(spec.url));
    if (cached === null || !existsSync(cached)) {
      inputs[name] = spec;
      continue;
    }
    const sha = await sha256File(cached);
    if (spec.url_sha256 !== null && spec.url_sha256 !== sha)
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.checksum,
        `${name}: the download ${cached} has sha256 ${sha}, the sources file records ${spec.url_sha256}`,
      );
    if (spec.url_sha256 === null) pinned.push(name);
    inputs[name] = { ...spec, url_sha256: sha };
  }
  return { sources: { ...sources, inputs }, pinned };
}
