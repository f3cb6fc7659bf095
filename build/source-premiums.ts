/**
 * @module Premiums of a plan year with several sources: each source's plans priced from its own Rates
 * file, or modeled when it has none, then merged into one rate table. Which states are real and which
 * modeled is kept, because provenance is per state (a year may mix both).
 */
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import type { TaxYearRules } from '../src/engine/rules-types.ts';
import type { BenchmarkTable } from './benchmarks.ts';
import { loadPremiums } from './load-premiums.ts';
import type { PlanSourcesData } from './load-plan-sources.ts';
import { openBundleFile, type PlanBundle } from './plan-sources.ts';
import type { ProgressSink } from './progress.ts';
import type { RateTable } from './puf/rates.ts';
import type { DiagnosticSink } from './read/diagnostics.ts';

export interface SourcePremiums {
  readonly rateTable: RateTable;
  /** States whose premiums are modeled. */
  readonly modeledStates: ReadonlySet<string>;
  /** Newest ImportDate of each source's Rates file (null when modeled or undated), by bundle id. */
  readonly ratesImport: ReadonlyMap<string, string | null>;
  /** Dental plans' rates from real Rate PUFs; never modeled. */
  readonly dentalRates: RateTable['rates'];
  /** States whose dental plans' source has a real Rates file: their dental premiums are loaded. */
  readonly dentalRatedStates: ReadonlySet<string>;
}

export interface PremiumContext {
  readonly year: number;
  readonly benchmarks: BenchmarkTable;
  readonly rules: TaxYearRules;
  readonly planAreas: ReadonlyMap<string, ReadonlySet<number>>;
}

export async function premiumsOfSources(
  bundles: readonly PlanBundle[],
  data: PlanSourcesData,
  ctx: PremiumContext,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<SourcePremiums> {
  const tables: RateTable[] = [];
  const modeledStates = new Set<string>();
  const ratesImport = new Map<string, string | null>();
  const dentalRates: RateTable['rates'] = new Map();
  const dentalRatedStates = new Set<string>();
  for (const bundle of bundles) {
    const variants: PlanVariantRecord[] = [];
    for (const v of data.variants.values()) if (data.states.get(v.state)?.bundle === bundle) variants.push(v);
    const dentalScids = new Set<string>();
    const dentalStates = new Set<string>();
    for (const d of data.dental.values()) {
      if (data.dentalStates.get(d.state) !== bundle) continue;
      dentalScids.add(d.standard_component_id);
      dentalStates.add(d.state);
    }
    const rates = bundle.rates;
    const {
      rateTable,
      premiumsModeled,
      dentalRates: bundleDental,
    } = await loadPremiums(
      {
        year: ctx.year,
        rates: rates === null ? null : () => openBundleFile(rates, 'rates'),
        variants,
        planAreas: ctx.planAreas,
        benchmarks: ctx.benchmarks,
        rules: ctx.rules,
        newestImport: bundles.length === 1 ? data.newestImport : newestOf(variants),
      },
      new Set(variants.map((v) => v.standard_component_id)),
      sink,
      progress,
      dentalScids,
    );
    if (rates !== null && !premiumsModeled) for (const s of dentalStates) dentalRatedStates.add(s);
    if (bundleDental !== null) for (const [k, v] of bundleDental) dentalRates.set(k, v);
    tables.push(rateTable);
    ratesImport.set(bundle.id, premiumsModeled ? null : rateTable.newestImport);
    if (premiumsModeled) for (const v of variants) modeledStates.add(v.state);
  }
  return {
    rateTable: tables.length === 1 ? tables[0]! : mergeRateTables(tables),
    modeledStates,
    ratesImport,
    dentalRates,
    dentalRatedStates,
  };
}

function newestOf(variants: readonly PlanVariantRecord[]): string | null {
  let newest: string | null = null;
  for (const v of variants) if (v.import_date !== null && (newest === null || v.import_date > newest)) newest = v.import_date;
  return newest;
}

/** One table of several; plans never overlap, since a state comes from one source only. */
function mergeRateTables(tables: readonly RateTable[]): RateTable {
  const rates: RateTable['rates'] = new Map();
  const familyTiers: RateTable['familyTiers'] = new Map();
  const sourceNames = new Set<string>();
  let newestImport: string | null = null;
  for (const t of tables) {
    for (const [k, v] of t.rates) rates.set(k, v);
    for (const [k, v] of t.familyTiers) familyTiers.set(k, v);
    for (const s of t.sourceNames) sourceNames.add(s);
    if (t.newestImport !== null && (newestImport === null || t.newestImport > newestImport)) newestImport = t.newestImport;
  }
  return { rates, familyTiers, sourceNames, newestImport };
}
