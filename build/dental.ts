/**
 * @module The dental half of a build: where each stand-alone dental plan is offered and
 * what it costs, in the shape the LMDB `dental-*` databases hold (src/engine/dental-record.ts).
 *
 * Dental plans are placed exactly as medical plans are (their own service areas, expanded against the
 * same geography: coverage.ts) and priced only from a real Rate PUF; nothing about them enters the
 * columnar tables, so medical search is untouched.
 */
import { AGE_BAND_COUNT } from '../src/engine/age-bands.ts';
import type { DentalAreaRates, DentalOffer, DentalPlanRecord, DentalStateRecord } from '../src/engine/dental-record.ts';
import { coverPlans } from './coverage.ts';
import type { Geography } from './geo/geography.ts';
import type { PlanSourcesData } from './load-plan-sources.ts';
import type { RateTable } from './puf/rates.ts';
import type { DiagnosticSink } from './read/diagnostics.ts';

export interface DentalData {
  readonly plans: ReadonlyMap<string, DentalPlanRecord>;
  /** County FIPS → the variants offered there, in plan id order. */
  readonly offers: ReadonlyMap<string, DentalOffer[]>;
  readonly rates: ReadonlyMap<string, DentalAreaRates[]>;
  readonly states: ReadonlyMap<string, DentalStateRecord>;
}

export function compileDental(
  plans: PlanSourcesData,
  geo: Geography,
  rates: RateTable['rates'],
  ratedStates: ReadonlySet<string>,
  sink: DiagnosticSink,
): DentalData {
  const ids = [...plans.dental.keys()].sort();
  const cover = coverPlans(
    ids.map((id) => plans.dental.get(id)!),
    plans.dentalServiceAreas,
    geo,
    sink,
    (state) => {
      const b = plans.dentalStates.get(state)!;
      return { planAttributes: b.planAttributes.input.file, serviceArea: b.serviceArea.input.file };
    },
  );
  const offers = new Map<string, DentalOffer[]>();
  for (const [scid, variants] of cover.variantsByScid) {
    for (const [county, zips] of cover.coverage.get(scid) ?? []) {
      let list = offers.get(county);
      if (list === undefined) offers.set(county, (list = []));
      for (const v of variants) list.push({ id: v.id, zips: zips === null ? null : [...zips].sort() });
    }
  }
  const dentalRates = new Map<string, DentalAreaRates[]>();
  for (const scid of cover.variantsByScid.keys()) {
    const byArea = rates.get(scid);
    if (byArea === undefined) continue;
    const rows: DentalAreaRates[] = [];
    for (const [area, cents] of [...byArea].sort((a, b) => a[0] - b[0])) {
      if (cents.length !== AGE_BAND_COUNT) continue;
      rows.push([area, Array.from(cents)]);
    }
    dentalRates.set(scid, rows);
  }
  const states = new Map<string, DentalStateRecord>();
  for (const state of [...plans.dentalStates.keys()].sort()) states.set(state, { rates_loaded: ratedStates.has(state) });
  return { plans: new Map(ids.map((id) => [id, plans.dental.get(id)!])), offers, rates: dentalRates, states };
}
