/**
 * @module Stand-alone dental plans of an opened build: a small index of their own, read
 * from the LMDB `dental-*` databases into RAM on first use (a few thousand offers per year), and the
 * pure search over it. Medical search never reads any of it.
 */
import type { Database } from 'lmdb';
import { ageBand } from './age-bands.ts';
import { DB } from './build-format.ts';
import type { DentalAreaRates, DentalOffer, DentalPlanRecord, DentalStateRecord } from './dental-record.ts';

export interface DentalCatalog {
  /** Dental plan variants in the build. */
  readonly variantCount: number;
  record(variantId: string): DentalPlanRecord | undefined;
  /** The dental plan variants offered at a ZIP of a county (a partial county's ZIP list honoured), in id order. */
  offeredAt(countyFips: string, zip: string): readonly DentalPlanRecord[];
  /** Monthly premium in dollars from the Rate PUF, or null when the file has no rate for the area and age. */
  premium(standardComponentId: string, ratingArea: number, age: number): number | null;
  /** Whether the state's dental plans come with Rate PUF rates (else every premium of the state is null). */
  ratesLoaded(state: string): boolean;
}

interface Offered {
  readonly plan: DentalPlanRecord;
  readonly zips: ReadonlySet<string> | null;
}

/** Reads the dental databases of a build; a build compiled before dental plans has none and an empty catalog. */
export function readDentalCatalog(db: (name: string) => Database): DentalCatalog {
  // lmdb-js opens a database the file lacks as undefined when read-only.
  const range = (name: string) => (db(name) as Database | undefined)?.getRange() ?? [];
  const records = new Map<string, DentalPlanRecord>();
  const byCounty = new Map<string, Offered[]>();
  const rates = new Map<string, Map<number, readonly number[]>>();
  const states = new Map<string, DentalStateRecord>();
  for (const { key, value } of range(DB.dentalPlans)) records.set(key as string, value as DentalPlanRecord);
  for (const { key, value } of range(DB.dentalOffers)) {
    const list: Offered[] = [];
    for (const o of value as DentalOffer[]) {
      const plan = records.get(o.id);
      if (plan !== undefined) list.push({ plan, zips: o.zips === null ? null : new Set(o.zips) });
    }
    byCounty.set(key as string, list);
  }
  for (const { key, value } of range(DB.dentalRates)) {
    rates.set(key as string, new Map((value as DentalAreaRates[]).map(([area, cents]) => [area, cents])));
  }
  for (const { key, value } of range(DB.dentalStates)) states.set(key as string, value as DentalStateRecord);
  return {
    variantCount: records.size,
    record: (id) => records.get(id),
    offeredAt(countyFips, zip) {
      const out: DentalPlanRecord[] = [];
      for (const o of byCounty.get(countyFips) ?? []) if (o.zips === null || o.zips.has(zip)) out.push(o.plan);
      return out;
    },
    premium(scid, ratingArea, age) {
      const cents = rates.get(scid)?.get(ratingArea)?.[ageBand(age)];
      return cents === undefined || cents === 0 ? null : cents / 100;
    },
    ratesLoaded: (state) => states.get(state)?.rates_loaded === true,
  };
}

/** One row of a dental search: the plan and its premium at the location and age, when the Rate PUF gives one. */
export interface DentalRow {
  readonly plan: DentalPlanRecord;
  readonly premium: number | null;
}

/**
 * The dental plans offered at a location, priced for an age. Order: by premium then plan id when any
 * plan has a premium (plans without one last, by id); otherwise by name (case-insensitive) then id.
 */
export function searchDental(
  catalog: DentalCatalog,
  where: { readonly countyFips: string; readonly zip: string; readonly ratingArea: number },
  age: number,
): DentalRow[] {
  const rows = catalog
    .offeredAt(where.countyFips, where.zip)
    .map((plan) => ({ plan, premium: catalog.premium(plan.standard_component_id, where.ratingArea, age) }));
  const byId = (a: DentalRow, b: DentalRow): number => (a.plan.id < b.plan.id ? -1 : a.plan.id > b.plan.id ? 1 : 0);
  if (rows.some((r) => r.premium !== null)) {
    return rows.sort((a, b) => {
      if (a.premium !== b.premium) {
        if (a.premium === null) return 1;
        if (b.premium === null) return -1;
        return a.premium - b.premium;
      }
      return byId(a, b);
    });
  }
  return rows.sort((a, b) => {
    const x = a.plan.name.toLowerCase();
    const y = b.plan.name.toLowerCase();
    return x < y ? -1 : x > y ? 1 : byId(a, b);
  });
}
