/**
 * @module The LMDB half of a build: plan variant details, ZIPs, counties, issuers per state, crosswalk
 * entries, benefits, family-tier rates and the stand-alone dental plans (build/dental.ts), written in one transaction (read one record at a time by
 * the engine, unlike the columnar tables).
 */
import { open as openLmdb } from 'lmdb';
import { DB, LMDB_OPTIONS } from '../src/engine/build-format.ts';
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import type { DentalData } from './dental.ts';
import type { Geography } from './geo/geography.ts';
import type { BenefitsByVariant } from './puf/benefits.ts';
import type { CrosswalkTable } from './puf/crosswalk.ts';
import type { RateTable } from './puf/rates.ts';
import type { IssuersByState } from './tables/state-counts.ts';

/** Writes the records; resolves to how many. */
export async function writeLmdb(
  path: string,
  data: {
    variants: Map<string, PlanVariantRecord>;
    geo: Geography;
    issuers: IssuersByState;
    crosswalk: CrosswalkTable | null;
    benefits: BenefitsByVariant | null;
    familyTiers: RateTable['familyTiers'];
    dental: DentalData;
  },
): Promise<number> {
  const root = openLmdb({ path, ...LMDB_OPTIONS });
  let n = 0;
  try {
    const plans = root.openDB({ name: DB.plans });
    const zips = root.openDB({ name: DB.zips });
    const counties = root.openDB({ name: DB.counties });
    const issuers = root.openDB({ name: DB.issuers });
    const crosswalk = root.openDB({ name: DB.crosswalk });
    const benefits = root.openDB({ name: DB.benefits });
    const familyTiers = root.openDB({ name: DB.familyTiers });
    // Dental plans in databases of their own: the medical ones hold the records they held before.
    const dentalPlans = root.openDB({ name: DB.dentalPlans });
    const dentalOffers = root.openDB({ name: DB.dentalOffers });
    const dentalRates = root.openDB({ name: DB.dentalRates });
    const dentalStates = root.openDB({ name: DB.dentalStates });
    await root.transaction(() => {
      for (const [id, rec] of data.variants) {
        plans.put(id, rec);
        n++;
      }
      for (const [zip, locs] of data.geo.zips) {
        zips.put(
          zip,
          locs.map((l) => ({
            state: l.state,
            county_fips: l.countyFips,
            county_name: l.countyName,
            rating_area: l.ratingArea,
            res_ratio: l.resRatio,
            tot_ratio: l.totRatio,
          })),
        );
        n++;
      }
      for (const c of data.geo.counties.values()) {
        counties.put(c.fips, {
          state: c.state,
          name: c.name,
          rating_areas: [...(data.geo.countyAreas.get(c.fips) ?? [])].sort((x, y) => x - y),
        });
        n++;
      }
      for (const [state, list] of data.issuers) {
        issuers.put(state, list);
        n++;
      }
      if (data.crosswalk !== null) {
        for (const [planId, entries] of data.crosswalk.plans) {
          crosswalk.put(planId, entries);
          n++;
        }
      }
      if (data.benefits !== null) {
        for (const [id, b] of data.benefits) {
          benefits.put(id, b);
          n++;
        }
      }
      for (const [scid, byArea] of data.familyTiers) {
        for (const [area, t] of byArea) {
          familyTiers.put([scid, area], t);
          n++;
        }
      }
      const { dental } = data;
      for (const [id, rec] of dental.plans) dentalPlans.put(id, rec);
      for (const [county, offers] of dental.offers) dentalOffers.put(county, offers);
      for (const [scid, rows] of dental.rates) dentalRates.put(scid, rows);
      for (const [state, rec] of dental.states) dentalStates.put(state, rec);
      n += dental.plans.size + dental.offers.size + dental.rates.size + dental.states.size;
    });
    await root.flushed;
  } finally {
    await root.close();
  }
  return n;
}
