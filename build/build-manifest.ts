/**
 * @module The manifest of a compiled build and its SHA256SUMS: what went in (inputs with their row
 * counts), how premiums were obtained, the counts, the kept warnings and the output files' digests.
 */
import { createHash } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FORMAT_VERSION, LMDB_FILE, MANIFEST_FILE, SUMS_FILE, TABLES_FILE } from '../src/engine/build-format.ts';
import { describeOutputs, sumsText } from '../src/engine/build-integrity.ts';
import type { BuildManifest, ManifestInput, StateProvenance } from '../src/engine/manifest.ts';
import { COMPILER_VERSION } from './compiler-version.ts';
import { METAL_FACTORS, VARIATION } from './model-rates.ts';
import type { ProgressSink } from './progress.ts';
import { provenanceLabels } from './provenance.ts';
import type { CrosswalkTable } from './puf/crosswalk.ts';
import type { RateTable } from './puf/rates.ts';
import { type DiagnosticSink, formatDiagnostic } from './read/diagnostics.ts';
import type { ResolvedInput } from './sources.ts';
import type { Assembled } from './tables/assemble.ts';

export interface ManifestParts {
  readonly year: number;
  readonly hash: string;
  readonly rulesYear: number;
  readonly inputs: ReadonlyMap<string, ResolvedInput>;
  readonly sink: DiagnosticSink;
  readonly progress: ProgressSink;
  readonly assembled: Assembled;
  readonly rateTable: RateTable;
  readonly premiumsModeled: boolean;
  /** Newest ImportDate of the Plan Attributes PUF. */
  readonly planImport: string | null;
  readonly crosswalk: CrosswalkTable | null;
  readonly tablesBytes: number;
  readonly provenance: Record<string, StateProvenance>;
  readonly serviceAreas: { readonly statewideByDecision: readonly string[]; readonly plansWithoutServiceArea: number };
  /** Newest effective date among the SLCSP benchmark values the build took. */
  readonly benchmarksInForce: string;
}

const MODELED_DESCRIPTION =
  'No Rate PUF was supplied: premiums are modeled. price(age) = SLCSP benchmark (state, rating area, year; 0–14 normalised) × age curve(age)/curve(0–14) × metal factor × per-plan variation (±12 %, from a hash of the plan id); silver plans of each rating area are scaled so the second-lowest benchmark-eligible silver premium equals the benchmark at every age.';

/** Writes manifest.json and SHA256SUMS into `dir`, whose data files are complete and closed. */
export function writeManifest(dir: string, p: ManifestParts): BuildManifest {
  const { year, premiumsModeled, rateTable, crosswalk, sink } = p;
  const freshnessDate =
    [p.planImport, premiumsModeled ? null : rateTable.newestImport]
      .filter((d): d is string => d !== null)
      .sort()
      .at(-1) ?? null;
  const lmdbBytes = statSync(join(dir, LMDB_FILE)).size;
  const manifest: BuildManifest = {
    format_version: FORMAT_VERSION,
    compiler_version: COMPILER_VERSION,
    build_hash: p.hash,
    year,
    built_at: new Date().toISOString(),
    // The build's own labels (a state's are under `provenance`): modeled when any state is.
    ...provenanceLabels(year, freshnessDate, premiumsModeled),
    premiums: premiumsModeled
      ? {
          source: 'modeled',
          description: MODELED_DESCRIPTION,
          benchmark_input: 'slcsp_benchmarks',
          metal_factors: METAL_FACTORS,
          variation: VARIATION,
          rules_year: p.rulesYear,
        }
      : { source: 'rate_puf', source_names: [...rateTable.sourceNames].sort() },
    rules_year: p.rulesYear,
    inputs: manifestInputs(p.inputs, sink),
    counts: p.assembled.counts,
    states: p.assembled.states,
    crosswalk:
      crosswalk === null
        ? null
        : {
            source_year: crosswalk.sourceYear,
            target_year: crosswalk.targetYear,
            rows: crosswalk.rows,
            plans: crosswalk.plans.size,
            states: [...crosswalk.states].sort(),
          },
    warnings: {
      count: sink.warningCount,
      rows_rejected: sink.errorCount,
      kept: sink.kept.map(formatDiagnostic),
      truncated: sink.truncated(),
    },
    provenance: p.provenance,
    service_areas: {
      statewide_by_decision: [...p.serviceAreas.statewideByDecision],
      plans_without_service_area: p.serviceAreas.plansWithoutServiceArea,
    },
    benchmarks: { input: 'slcsp_benchmarks', in_force: p.benchmarksInForce },
    stages: p.progress.summaries.map((s) => ({ ...s })),
    files: { [LMDB_FILE]: lmdbBytes, [TABLES_FILE]: p.tablesBytes },
    // Hashed from the files as they lie on disk, after LMDB closed them: what a reader will find.
    outputs: describeOutputs(dir),
  };
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  writeFileSync(join(dir, MANIFEST_FILE), manifestText);
  writeFileSync(join(dir, SUMS_FILE), sumsText(manifest.outputs ?? [], createHash('sha256').update(manifestText).digest('hex')));
  return manifest;
}

function manifestInputs(inputs: ReadonlyMap<string, ResolvedInput>, sink: DiagnosticSink): ManifestInput[] {
  return [...inputs.values()].map((i) => {
    const counts = sink.files.get(i.file);
    return {
      name: i.name,
      title: i.title,
      path: i.path,
      origin: i.origin,
      url: i.url,
      sha256: i.sha256,
      bytes: i.bytes,
      checksum_verified: i.checksumVerified,
      rows_read: counts?.rowsRead ?? null,
      rows_rejected: counts?.rowsRejected ?? null,
      rows_ignored: counts?.rowsIgnored ?? null,
    };
  });
}
