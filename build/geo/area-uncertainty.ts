/**
 * @module Rating areas the geography places by a guess: ZIPs of a county that straddles rating areas of
 * the state's own rating unit (Connecticut's planning regions over its legacy counties). With modeled
 * premiums this only shifted a benchmark; with a state's real rates it can price a ZIP in the wrong
 * area, so the manifest counts those ZIPs and the ZIP lookup says so.
 */
import type { RatingAreaUncertainty } from '../../src/engine/manifest.ts';
import type { Geography } from './geography.ts';

/** `data/geo/rating-area-uncertainty.json`. */
export interface UncertaintyFile {
  readonly counties: Readonly<Record<string, { readonly areas: readonly number[]; readonly why: string }>>;
}

/** The uncertain counties of states with plan data, with the ZIPs that have a location in them. */
export function areaUncertainty(file: UncertaintyFile, geo: Geography, statesWithPlans: ReadonlySet<string>): RatingAreaUncertainty {
  const counties: Record<string, RatingAreaUncertainty['counties'][string]> = {};
  const zips = new Set<string>();
  for (const fips of Object.keys(file.counties).sort()) {
    const county = geo.counties.get(fips);
    if (county === undefined || !statesWithPlans.has(county.state)) continue;
    const entry = file.counties[fips]!;
    const countyZips = geo.countyZips.get(fips) ?? [];
    for (const z of countyZips) zips.add(z);
    counties[fips] = {
      state: county.state,
      county_name: county.name,
      assigned_area: [...(geo.countyAreas.get(fips) ?? [])][0] ?? null,
      possible_areas: [...entry.areas],
      zips: countyZips.length,
      why: entry.why,
    };
  }
  return { zips: zips.size, counties };
}
