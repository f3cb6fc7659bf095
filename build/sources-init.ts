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
import { join, resolve } from 'node:path';
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';
import { cacheName, type InputSpec, type MirrorSpec, sha256File, type SourcesFile } from './sources.ts';

const PUF = (year: number, name: string): string => `https://download.cms.gov/marketplace-puf/${year}/${name}-puf.zip`;
const HOME = 'https://www.cms.gov/marketplace/resources/data/public-use-files';

const SBE_HOME = 'https://www.cms.gov/marketplace/resources/data/state-based-public-use-files';
/** Plan inputs of the federal PUFs: never carried over from another year. */
const FEDERAL_PLAN_INPUTS = new Set(['plan_attributes', 'service_area', 'rates', 'benefits', 'crosswalk']);
/** The three files of a state-based-exchange bundle: input suffix, role, file stem CMS uses, title. */
const SBE_FILES = [
  ['plans', 'plan_attributes', 'Plans', 'Plans PUF (plan variants and cost sharing)'],
  ['rates', 'rates', 'Rates', 'Rates PUF (plan-level premiums)'],
  ['service_areas', 'service_area', 'ServiceAreas', 'Service Areas PUF'],
] as const;

export interface InitOptions {
  /** States whose CMS state-based-exchange bundle the year reads (Plans, Rates, Service Areas). */
  readonly sbeStates?: readonly string[];
  /** False: no federal Exchange PUFs this year (every state with plans from an SBE bundle). */
  readonly federal?: boolean;
}

/**
 * The inputs of one state's SBE bundle. CMS publishes no URL pattern for them (each state's files are
 * listed on its SBE PUF page, dated, e.g. `CTPlans05102024.csv`, or as one zip): `url` is null, the
 * operator adds a mirror path (or passes --sbe-ct-plans PATH), and `--pin` records its checksum.
 */
export function sbeInputs(year: number, state: string): Record<string, InputSpec> {
  const out: Record<string, InputSpec> = {};
  for (const [suffix, role, stem, title] of SBE_FILES) {
    out[`sbe_${state.toLowerCase()}_${suffix}`] = {
      title: `CMS state-based-exchange ${title}, ${state}, PY${year}`,
      required: true,
      home: SBE_HOME,
      url: null,
      url_sha256: null,
      bundle: `sbe-${state}`,
      role,
      dialect: 'sbe',
      member: `^${state}${stem}\\d*\\.csv$`,
      mirrors: [],
    };
  }
  return out;
}

/** The sources file of `year`, from the CMS patterns and the year-independent inputs of `previous`. */
export function initSources(year: number, previous: SourcesFile, opts: InitOptions = {}): SourcesFile {
  const cms = (title: string, required: boolean, url: string): InputSpec => ({
    title,
    required,
    home: HOME,
    url,
    url_sha256: null,
    mirrors: [],
  });
  const federal: Record<string, InputSpec> = {
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
  const inputs: Record<string, InputSpec> = opts.federal === false ? {} : { ...federal };
  for (const state of opts.sbeStates ?? []) Object.assign(inputs, sbeInputs(year, state));
  // Another year's plan files are never this year's: only geography, rating areas and benchmarks carry over.
  for (const [name, spec] of Object.entries(previous.inputs)) {
    if (!(name in inputs) && !FEDERAL_PLAN_INPUTS.has(name) && spec.role === undefined) inputs[name] = spec;
  }
  const sbe =
    (opts.sbeStates ?? []).length === 0
      ? ''
      : ` State-exchange bundles (${(opts.sbeStates ?? []).join(', ')}) have no URL pattern: add each file's mirror path (or pass it with --sbe-xx-plans PATH …), then --pin records the mirrors' checksums.`;
  return {
    year,
    description: `Inputs of the PY${year} build, written by hpd sources init from the CMS URL patterns; the CMS checksums are null until the first download (hpd build --fetch-optional, then hpd sources init --year ${year} --pin). Resolution order per input as in the other years' files.${sbe}`,
    inputs,
  };
}

/**
 * Records the sha256 of every input downloaded into `<cacheDir>/<year>/`. A checksum already recorded
 * that the file contradicts is an error, never overwritten. Returns the new file and the inputs pinned.
 */
export async function pinSources(
  sources: SourcesFile,
  cacheDir: string,
  root?: string,
): Promise<{ sources: SourcesFile; pinned: string[] }> {
  const inputs: Record<string, InputSpec> = {};
  const pinned: string[] = [];
  for (const [name, rawSpec] of Object.entries(sources.inputs)) {
    // Mirrors without a checksum (an SBE file the operator just placed) are pinned from the file itself.
    const spec = root === undefined ? rawSpec : await pinMirrors(name, rawSpec, root, pinned);
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

async function pinMirrors(name: string, spec: InputSpec, root: string, pinned: string[]): Promise<InputSpec> {
  const mirrors: MirrorSpec[] = [];
  for (const m of spec.mirrors) {
    const path = resolve(root, m.path);
    if (m.sha256 !== undefined || !existsSync(path)) {
      mirrors.push(m);
      continue;
    }
    mirrors.push({ ...m, sha256: await sha256File(path) });
    pinned.push(`${name} (${m.path})`);
  }
  return { ...spec, mirrors };
}
