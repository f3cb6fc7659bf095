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
  /**
   * The rates of the dental plans asked for, from a real Rate PUF only: null when premiums are modeled,
   * since modeled medical premiums give no basis for dental ones.
   */
  readonly dentalRates: RateTable['rates'] | null;
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
  dentalScids: ReadonlySet<string> = new Set(),
): Promise<Premiums> {
  const { year } = src;
  if (src.rates !== null) {
    // One pass over the Rate PUF (280 MB for a national file) reads the medical and the dental rows.
    const wanted = dentalScids.size === 0 ? scids : new Set([...scids, ...dentalScids]);
    const loaded = await loadRates(await src.rates(), year, wanted, sink, progress);
    const premiumsModeled = loaded.sourceNames.size > 0 && [...loaded.sourceNames].every((s) => s === MODELED_SOURCE_NAME);
    const { medical, dental } = splitDental(loaded, dentalScids);
    return { rateTable: medical, premiumsModeled, dentalRates: premiumsModeled || dental.size === 0 ? null : dental };
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
  return { rateTable, premiumsModeled: true, dentalRates: null };
}

/**
 * The dental plans' rates taken out of a loaded table, so the medical table holds what it held before
 * dental plans were read (their family tiers too: a community-rated dental plan's tiers are not the
 * medical family-tier records). The source names and import date stay the file's.
 */
function splitDental(table: RateTable, dentalScids: ReadonlySet<string>): { medical: RateTable; dental: RateTable['rates'] } {
  const dental: RateTable['rates'] = new Map();
  if (dentalScids.size === 0) return { medical: table, dental };
  for (const scid of dentalScids) {
    const r = table.rates.get(scid);
    if (r !== undefined) dental.set(scid, r);
    table.rates.delete(scid);
    table.familyTiers.delete(scid);
  }
  return { medical: table, dental };
}
