/**
 * @module Provenance per state: which source gave a state's plans and whether its premiums are real
 * (a Rates file) or modeled, with the `data_source` / `data_freshness` labels responses about the
 * state carry. The freshness date is the source's own (its newest import), so every state of the
 * federal PUFs shares the federal files' date.
 */
import type { StateProvenance } from '../src/engine/manifest.ts';
import type { PlanSourcesData } from './load-plan-sources.ts';
import type { SourcePremiums } from './source-premiums.ts';

export const MODELED_DATA_SOURCE = 'puf_data+modeled_premiums';
export const REAL_DATA_SOURCE = 'puf_data';

/** The labels of a build or of one state: `PY2025 as of 2024-12-05; premiums modeled from SLCSP benchmarks`. */
export function provenanceLabels(year: number, asOf: string | null, modeled: boolean): { data_source: string; data_freshness: string } {
  return {
    data_source: modeled ? MODELED_DATA_SOURCE : REAL_DATA_SOURCE,
    data_freshness: `PY${year} as of ${asOf ?? 'unknown'}${modeled ? '; premiums modeled from SLCSP benchmarks' : ''}`,
  };
}

export function stateProvenance(year: number, plans: PlanSourcesData, premiums: SourcePremiums): Record<string, StateProvenance> {
  // The plan-side date of each source: the newest import over its states.
  const planImport = new Map<string, string | null>();
  for (const src of plans.states.values()) {
    const cur = planImport.get(src.bundle.id) ?? null;
    if (src.newestImport !== null && (cur === null || src.newestImport > cur)) planImport.set(src.bundle.id, src.newestImport);
    else if (!planImport.has(src.bundle.id)) planImport.set(src.bundle.id, cur);
  }
  const out: Record<string, StateProvenance> = {};
  for (const state of [...plans.states.keys()].sort()) {
    const { bundle } = plans.states.get(state)!;
    const modeled = premiums.modeledStates.has(state);
    const asOf = [planImport.get(bundle.id) ?? null, modeled ? null : (premiums.ratesImport.get(bundle.id) ?? null)]
      .filter((d): d is string => d !== null)
      .sort()
      .at(-1);
    out[state] = {
      source: bundle.id,
      plans_input: bundle.planAttributes.input.name,
      plans_file: bundle.planAttributes.input.file,
      service_area_file: bundle.serviceArea.input.file,
      rates_file: bundle.rates?.input.file ?? null,
      premiums: modeled ? 'modeled' : 'rate_puf',
      ...provenanceLabels(year, asOf ?? null, modeled),
    };
  }
  return out;
}
