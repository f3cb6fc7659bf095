/**
 * @module The premiums of a build: the Rate PUF when one is supplied, otherwise rows modeled from the
 * SLCSP benchmarks and compiled through the same loader, so both paths produce one kind of rate table.
 */
import { Readable } from 'node:stream';
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import type { TaxYearRules } from '../src/engine/rules-types.ts';
import type { BenchmarkTable } from './benchmarks.ts';
import { MODELED_SOURCE_NAME, modeledRatePufCsv, modelPlans } from './model-rates.ts';
import type { ProgressSink } from './progress.ts';
import { loadRates, type RateTable } from './puf/rates.ts';
import type { DiagnosticSink } from './read/diagnostics.ts';
import { openTableFromStream, type TableReader } from './read/table.ts';

export interface Premiums {
  readonly rateTable: RateTable;
  /** True when every rate row is modeled (no Rate PUF, or a Rate PUF written by the modeler). */
  readonly premiumsModeled: boolean;
}

export interface PremiumSources {
  readonly year: number;
  /** Opens the Rate PUF (in its dialect), or null to model the premiums. */
  readonly rates: (() => Promise<TableReader>) | null;
  readonly variants: Iterable<PlanVariantRecord>;
  readonly planAreas: ReadonlyMap<string, ReadonlySet<number>>;
  readonly benchmarks: BenchmarkTable;
  readonly rules: TaxYearRules;
  /** Newest ImportDate of the Plan Attributes PUF, the modeled rows' import date. */
  readonly newestImport: string | null;
}

const MODELED_FILE = 'rate-puf.modeled.csv';

export async function loadPremiums(
  src: PremiumSources,
  scids: ReadonlySet<string>,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<Premiums> {
  const { year } = src;
  if (src.rates !== null) {
    const rateTable = await loadRates(await src.rates(), year, scids, sink, progress);
    const premiumsModeled = rateTable.sourceNames.size > 0 && [...rateTable.sourceNames].every((s) => s === MODELED_SOURCE_NAME);
    return { rateTable, premiumsModeled };
  }
  const plans = modelPlans(src.variants, (scid) => src.planAreas.get(scid) ?? new Set());
  const csv = modeledRatePufCsv(
    { year, plans, benchmarks: src.benchmarks, rules: src.rules, importDate: src.newestImport ?? `${year - 1}-12-01` },
    sink,
  );
  const table = await openTableFromStream(Readable.from(csv), MODELED_FILE);
  const rateTable = await loadRates(table, year, scids, sink, progress, 'rates (modeled)');
  // The modeled file is not an input: the manifest's per-input row counts must not list it.
  sink.files.delete(MODELED_FILE);
  return { rateTable, premiumsModeled: true };
}
