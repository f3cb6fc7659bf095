/**
 * @module The sources of plan data of one plan year: the federal Exchange PUFs, any number of
 * state-based-exchange (SBE) bundles, or both, as `data/sources/<year>.json` lists them.
 *
 * Each source is a bundle of a Plans file, a Service Areas file and, when it has one, a Rates file. A
 * federal bundle is the inputs named `plan_attributes`, `service_area` and `rates`; any other bundle is
 * the inputs that name it (`"bundle": "sbe-CT"`) with their `role`. Bundles are read in the order the
 * sources file lists them (federal first), which keeps a build's table order reproducible.
 */
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';
import { withDialect } from './read/dialect.ts';
import { openTable, type TableReader } from './read/table.ts';
import { DIALECTS } from './puf/sbe-dialect.ts';
import type { InputSpec, PlanRole, ResolvedInput, SourcesFile } from './sources.ts';

export const FEDERAL_BUNDLE = 'federal';
const PLAN_ROLES: readonly PlanRole[] = ['plan_attributes', 'service_area', 'rates'];

/** One input of a bundle, as resolved, with what the sources file says about it. */
export interface BundleFile {
  readonly input: ResolvedInput;
  readonly spec: InputSpec;
}

export interface PlanBundle {
  /** `federal`, or the bundle's name (`sbe-CT`). */
  readonly id: string;
  readonly planAttributes: BundleFile;
  readonly serviceArea: BundleFile;
  /** Null: premiums are modeled for this bundle's plans. */
  readonly rates: BundleFile | null;
}

function roleOf(name: string, spec: InputSpec): PlanRole | null {
  if (spec.role !== undefined) return spec.role;
  return (PLAN_ROLES as readonly string[]).includes(name) ? (name as PlanRole) : null;
}

/**
 * The bundles whose Plans file was found. A bundle missing its Plans file is left out (its inputs are
 * optional, as the federal PUFs are in a year served only by state exchanges); one with Plans but no
 * Service Areas file cannot say where its plans are offered, and stops the build.
 */
export function planBundles(sources: SourcesFile, inputs: ReadonlyMap<string, ResolvedInput>): PlanBundle[] {
  const files = new Map<string, Partial<Record<PlanRole, BundleFile>>>();
  for (const [name, spec] of Object.entries(sources.inputs)) {
    const role = roleOf(name, spec);
    if (role === null) continue;
    const id = spec.bundle ?? FEDERAL_BUNDLE;
    let bundle = files.get(id);
    if (bundle === undefined) files.set(id, (bundle = {}));
    if (bundle[role] !== undefined) {
      throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `sources file for ${sources.year}: bundle ${id} lists two ${role} inputs`);
    }
    const input = inputs.get(name);
    if (input !== undefined) bundle[role] = { input, spec };
  }
  const out: PlanBundle[] = [];
  for (const [id, f] of files) {
    if (f.plan_attributes === undefined) continue;
    if (f.service_area === undefined) {
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.inputMissing,
        `${f.plan_attributes.input.file}: plan source ${id} has no Service Area file; a plan's offer cannot be placed without one`,
      );
    }
    out.push({ id, planAttributes: f.plan_attributes, serviceArea: f.service_area, rates: f.rates ?? null });
  }
  if (out.length === 0) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `sources file for ${sources.year}: no plan source was found (no Plans file)`);
  }
  return out;
}

/** Opens one file of a bundle: the member of a zip when named, in the file's column dialect. */
export async function openBundleFile(f: BundleFile, role: PlanRole): Promise<TableReader> {
  const member = f.spec.member === undefined ? undefined : new RegExp(f.spec.member, 'i');
  const table = await openTable(f.input.path, f.input.file, member);
  return f.spec.dialect === undefined ? table : withDialect(table, DIALECTS[f.spec.dialect][role]);
}
