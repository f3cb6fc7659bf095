/**
 * @module Where each plan is offered: its service area expanded against the national geography.
 *
 * A plan's offer is a set of (county, ZIP restriction) pairs; with the county's rating areas this gives
 * the rating areas a Rate PUF must price the plan in, and the plan lists of every ZIP location.
 */
import type { Geography } from './geo/geography.ts';
import type { ServiceArea } from './puf/service-area.ts';
import { DIAGNOSTIC_CODES, type DiagnosticSink } from './read/diagnostics.ts';

/** County FIPS → null (whole county) or the ZIPs of a partial county. */
export type Coverage = Map<string, ReadonlySet<string> | null>;

/** Expands a service area; a whole-state area covers every county of the state that has ZIPs or an area. */
export function expandServiceArea(sa: ServiceArea, geo: Geography): Coverage {
  const out: Coverage = new Map();
  if (sa.coverEntireState) {
    for (const c of geo.counties.values()) {
      if (c.state === sa.state && geo.countyAreas.has(c.fips)) out.set(c.fips, null);
    }
  }
  for (const [fips, zips] of sa.counties) {
    if (out.get(fips) === null) continue;
    out.set(fips, zips);
  }
  return out;
}

/** Rating areas a coverage touches: all areas of whole counties, and the areas of the listed ZIPs. */
export function areasOfCoverage(coverage: Coverage, geo: Geography, sink: DiagnosticSink, label: string): Set<number> {
  const areas = new Set<number>();
  for (const [fips, zips] of coverage) {
    if (zips === null) {
      const a = geo.countyAreas.get(fips);
      if (a === undefined) {
        sink.warn({ file: label, line: 0, column: 0, value: fips, code: DIAGNOSTIC_CODES.geography, reason: 'service area county has no rating area in the geography' });
        continue;
      }
      for (const x of a) areas.add(x);
      continue;
    }
    for (const zip of zips) {
      const loc = geo.zips.get(zip)?.find((l) => l.countyFips === fips);
      if (loc === undefined) {
        sink.warn({ file: label, line: 0, column: 0, value: `${zip} in ${fips}`, code: DIAGNOSTIC_CODES.geography, reason: 'partial-county ZIP does not lie in that county per HUD; left out' });
        continue;
      }
      areas.add(loc.ratingArea);
    }
  }
  return areas;
}
