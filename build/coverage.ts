/**
 * @module Where each plan is offered: its service area expanded against the national geography.
 *
 * A plan's offer is a set of (county, ZIP restriction) pairs; with the county's rating areas this gives
 * the rating areas a Rate PUF must price the plan in, and the plan lists of every ZIP location.
 */
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import type { Geography } from './geo/geography.ts';
import { serviceAreaKey, type ServiceArea } from './puf/service-area.ts';
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
        sink.warn({
          file: label,
          line: 0,
          column: 0,
          value: fips,
          code: DIAGNOSTIC_CODES.geography,
          reason: 'service area county has no rating area in the geography',
        });
        continue;
      }
      for (const x of a) areas.add(x);
      continue;
    }
    for (const zip of zips) {
      const loc = geo.zips.get(zip)?.find((l) => l.countyFips === fips);
      if (loc === undefined) {
        sink.warn({
          file: label,
          line: 0,
          column: 0,
          value: `${zip} in ${fips}`,
          code: DIAGNOSTIC_CODES.geography,
          reason: 'partial-county ZIP does not lie in that county per HUD; left out',
        });
        continue;
      }
      areas.add(loc.ratingArea);
    }
  }
  return areas;
}

/** What placing a plan needs of a variant: medical and dental records both have it. */
export type CoverableVariant = Pick<PlanVariantRecord, 'standard_component_id' | 'issuer_id' | 'service_area_id' | 'state'>;

/** Coverage and rating areas of every plan (by standard component id), and its variants grouped under it. */
export interface PlanCoverage<V extends CoverableVariant = PlanVariantRecord> {
  readonly coverage: Map<string, Coverage>;
  readonly planAreas: Map<string, Set<number>>;
  readonly variantsByScid: Map<string, V[]>;
  /** Standard component ids whose service area no row of the Service Area PUF describes (offered nowhere). */
  readonly withoutServiceArea: string[];
}

/** The two PUFs a plan came from, by name, for diagnostics. */
export interface PlanFiles {
  readonly planAttributes: string;
  readonly serviceArea: string;
}

/**
 * Expands the service area of every plan; all variants of a plan share it. `filesOf` names the two
 * PUFs of a plan's source in diagnostics.
 */
export function coverPlans<V extends CoverableVariant>(
  variants: Iterable<V>,
  serviceAreas: ReadonlyMap<string, ServiceArea>,
  geo: Geography,
  sink: DiagnosticSink,
  filesOf: (state: string) => PlanFiles,
): PlanCoverage<V> {
  const coverage = new Map<string, Coverage>();
  const planAreas = new Map<string, Set<number>>();
  const variantsByScid = new Map<string, V[]>();
  for (const v of variants) {
    let list = variantsByScid.get(v.standard_component_id);
    if (list === undefined) variantsByScid.set(v.standard_component_id, (list = []));
    list.push(v);
  }
  // Plans of an issuer share service areas: expand each service area once.
  const bySa = new Map<string, { cov: Coverage; areas: Set<number> }>();
  const withoutServiceArea: string[] = [];
  for (const [scid, planVariants] of variantsByScid) {
    const v = planVariants[0]!;
    const saKey = serviceAreaKey(v.issuer_id, v.service_area_id);
    const known = bySa.get(saKey);
    if (known !== undefined) {
      coverage.set(scid, known.cov);
      planAreas.set(scid, known.areas);
      continue;
    }
    const sa = serviceAreas.get(saKey);
    const files = filesOf(v.state);
    if (sa === undefined) {
      withoutServiceArea.push(scid);
      sink.warn({
        file: files.planAttributes,
        line: 0,
        column: 0,
        columnName: 'ServiceAreaId',
        value: `${scid} ${v.service_area_id}`,
        code: DIAGNOSTIC_CODES.geography,
        reason: 'service area not in the Service Area PUF; the plan is offered nowhere',
      });
      coverage.set(scid, new Map());
      planAreas.set(scid, new Set());
      continue;
    }
    const cov = expandServiceArea(sa, geo);
    const areas = areasOfCoverage(cov, geo, sink, files.serviceArea);
    bySa.set(saKey, { cov, areas });
    coverage.set(scid, cov);
    planAreas.set(scid, areas);
  }
  return { coverage, planAreas, variantsByScid, withoutServiceArea };
}
