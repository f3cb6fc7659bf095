/**
 * @module National geography: every ZIP of the 50 states and DC → one or more locations
 * {state, county, rating area, residential share}.
 *
 * Rating areas are built from counties, except where a state (AK, ID, MA, NE) or a county (Los Angeles)
 * is rated by 3-digit ZIP. A ZIP that spans counties or rating areas keeps every candidate, ordered by
 * the HUD residential ratio, because the API prices the primary location by default but lets the caller
 * pick another with `county_fips`.
 *
 * Connecticut is the exception to the current crosswalk: it rates by its 8 legacy counties, which HUD
 * replaced with the 9 planning regions in 2022, and a region holds towns of legacy counties in
 * different rating areas. Its ZIPs are therefore placed by HUD's last crosswalk before the switch
 * (Q4 2020, CT rows), which gives each ZIP its legacy counties with address ratios; the current file
 * still decides which CT ZIPs exist.
 */
import { DIAGNOSTIC_CODES, type DiagnosticSink } from '../read/diagnostics.ts';
import { openTable } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';
import { countyAreaResolver, readCountyAreaTables } from './county-area.ts';
import { readCountyZip3, readZip3Areas } from './zip3-areas.ts';
import type { County } from './county.ts';
import type { GeographyConfig } from './geography-config.ts';

export type { GeographyConfig } from './geography-config.ts';

export interface Location {
  readonly state: string;
  readonly countyFips: string;
  readonly countyName: string;
  readonly ratingArea: number;
  /** HUD residential ratio of the ZIP in this county (0–1). */
  readonly resRatio: number;
  /** HUD total ratio, the tie-breaker for ZIPs without residential addresses. */
  readonly totRatio: number;
}

export interface Geography {
  /** ZIP → locations, primary first. */
  readonly zips: Map<string, Location[]>;
  readonly counties: Map<string, County>;
  /** County FIPS → rating areas it touches (several in ZIP3-rated places). */
  readonly countyAreas: Map<string, Set<number>>;
  /** County FIPS → ZIPs with addresses in it. */
  readonly countyZips: Map<string, string[]>;
  /** State → rating area numbers in use. */
  readonly stateAreas: Map<string, Set<number>>;
  readonly stateFips: Map<string, string>;
  /**
   * Connecticut ZIP → the 2022 planning regions the current crosswalk places it in (today's county
   * equivalents in Census and HUD files), most residential addresses first: shown beside the legacy
   * counties that price it.
   */
  readonly planningRegions: Map<string, Array<{ readonly fips: string; readonly resRatio: number }>>;
}

export interface GeographyInputs {
  readonly hud: string;
  readonly countyNames: string;
  readonly ctRegions: string;
  readonly countyAreas: string;
  readonly countyAreas2014: string;
  readonly zip3Areas: string;
  readonly laZip3: string;
  /** HUD's Q4 2020 ZIP → county rows of Connecticut (legacy counties). */
  readonly ctLegacy: string;
}

/** Reads the geography inputs and joins them. */
export async function loadGeography(
  inputs: GeographyInputs,
  config: GeographyConfig,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<Geography> {
  const jurisdictions = new Set(config.jurisdictions.value);
  const { counties, stateFips, ctRegions } = await readCounties(inputs, sink, progress);
  const areaTables = await readCountyAreaTables(inputs, sink, progress);
  const zip3 = await readZip3Areas(inputs.zip3Areas, stateFips, sink, progress);
  const countyZip3 = readCountyZip3(config, inputs.laZip3);
  const zip3States = new Set(config.zip3_states.value);
  const areaOfCounty = countyAreaResolver(config, areaTables);
  // undefined: the place is rated by county; null: rated by ZIP3, but this ZIP3 has no area.
  const zip3Area = (state: string, fips: string, z3: string): number | null | undefined => {
    const byCountyZip3 = countyZip3.get(fips);
    if (byCountyZip3 !== undefined) return byCountyZip3.get(z3) ?? null;
    if (zip3States.has(state)) return zip3.get(`${state}:${z3}`) ?? null;
    return undefined;
  };

  const join = { jurisdictions, counties, stateFips, areaOfCounty, zip3Area };
  const { geo, ctRows } = await readZipLocations(inputs.hud, join, sink, progress);
  await placeConnecticut(inputs.ctLegacy, geo, ctRows, { ...join, ctRegions }, sink, progress);
  for (const list of geo.zips.values()) list.sort(compareLocations);
  // Counties with no ZIP rows (rare) still need an area for service-area coverage.
  for (const c of counties.values()) {
    if (!jurisdictions.has(c.state) || geo.countyAreas.has(c.fips)) continue;
    const a = areaOfCounty(c);
    if (a !== null) geo.countyAreas.set(c.fips, new Set([a]));
  }
  return geo;
}

/** Census counties, then the Connecticut planning regions that replaced its counties in 2022. */
async function readCounties(
  inputs: GeographyInputs,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<{ counties: Map<string, County>; stateFips: Map<string, string>; ctRegions: Set<string> }> {
  const counties = new Map<string, County>();
  const ctRegions = new Set<string>();
  const stateFips = new Map<string, string>();
  const census = await openTable(inputs.countyNames, 'county_fips_2020.csv');
  await forEachRow(
    census,
    { required: ['state_code', 'state_fips', 'full_fips', 'county_name'], stage: 'county names' },
    sink,
    progress,
    (row) => {
      const fips = padCode(row.get('full_fips'), 5);
      const state = row.get('state_code');
      if (fips === null) {
        sink.reject({
          ...row.at('full_fips'),
          reason: 'not a 5-digit county FIPS code',
        });
        return;
      }
      stateFips.set(fips.slice(0, 2), state);
      counties.set(fips, { fips, state, name: row.get('county_name') });
    },
  );
  const ct = await openTable(inputs.ctRegions, 'ct_planning_regions_2022.csv');
  await forEachRow(ct, { required: ['state_code', 'county_fips', 'county_name'], stage: 'CT planning regions' }, sink, progress, (row) => {
    const fips = padCode(row.get('county_fips'), 5);
    if (fips === null) {
      sink.reject({
        ...row.at('county_fips'),
        reason: 'not a 5-digit county FIPS code',
      });
      return;
    }
    counties.set(fips, { fips, state: row.get('state_code'), name: row.get('county_name') });
    ctRegions.add(fips);
  });
  return { counties, stateFips, ctRegions };
}

interface ZipJoin {
  readonly jurisdictions: ReadonlySet<string>;
  readonly counties: Map<string, County>;
  readonly stateFips: Map<string, string>;
  readonly areaOfCounty: (c: County) => number | null;
  readonly zip3Area: (state: string, fips: string, z3: string) => number | null | undefined;
}

/** A Connecticut row of the current crosswalk: kept aside, used only for a ZIP the 2020 file lacks. */
interface CtCurrentRow {
  readonly zip: string;
  readonly county: County;
  readonly resRatio: number;
  readonly totRatio: number;
}

/**
 * Joins the HUD ZIP → county rows with the counties and their rating areas. Connecticut's rows are set
 * aside (see {@link placeConnecticut}).
 */
async function readZipLocations(
  path: string,
  j: ZipJoin,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<{ geo: Geography; ctRows: CtCurrentRow[] }> {
  const ctRows: CtCurrentRow[] = [];
  const geo: Geography = {
    zips: new Map(),
    counties: j.counties,
    countyAreas: new Map(),
    countyZips: new Map(),
    stateAreas: new Map(),
    stateFips: j.stateFips,
    planningRegions: new Map(),
  };
  const warnedZip3 = new Set<string>();
  const hud = await openTable(path, 'ZIP_COUNTY_122024.csv');
  await forEachRow(hud, { required: ['ZIP', 'COUNTY', 'RES_RATIO', 'TOT_RATIO'], stage: 'ZIP to county (HUD)' }, sink, progress, (row) => {
    const zip = padCode(row.get('ZIP'), 5);
    const fips = padCode(row.get('COUNTY'), 5);
    if (zip === null || fips === null) {
      const bad = zip === null ? 'ZIP' : 'COUNTY';
      sink.reject({
        ...row.at(bad),
        reason: 'must be a 5-digit code',
      });
      return;
    }
    const state = j.stateFips.get(fips.slice(0, 2));
    if (state === undefined || !j.jurisdictions.has(state)) {
      sink.rowIgnored(hud.file); // territories have no ACA rating areas
      return;
    }
    const county = j.counties.get(fips);
    if (county === undefined) {
      sink.reject({
        ...row.at('COUNTY', fips),
        reason: 'county FIPS not in the Census county list',
      });
      return;
    }
    const res = Number(row.get('RES_RATIO'));
    const tot = Number(row.get('TOT_RATIO'));
    if (!Number.isFinite(res) || !Number.isFinite(tot)) {
      sink.reject({
        ...row.at('RES_RATIO'),
        reason: 'ratio is not a number',
      });
      return;
    }
    if (state === 'CT') {
      ctRows.push({ zip, county, resRatio: res, totRatio: tot });
      return;
    }
    const z3 = zip.slice(0, 3);
    let area = j.zip3Area(state, fips, z3);
    if (area === null && !warnedZip3.has(`${fips}:${z3}`)) {
      warnedZip3.add(`${fips}:${z3}`);
      sink.warn({
        ...row.at('ZIP', zip),
        code: DIAGNOSTIC_CODES.geography,
        reason: `ZIP3 ${z3} has no rating area in the ZIP3 table; using the county's area`,
      });
    }
    area ??= j.areaOfCounty(county);
    if (area === null) {
      sink.reject({
        ...row.at('COUNTY', fips),
        code: DIAGNOSTIC_CODES.geography,
        reason: `no rating area for ${county.name}, ${state}`,
      });
      return;
    }
    addLocation(geo, zip, { state, countyFips: fips, countyName: county.name, ratingArea: area, resRatio: res, totRatio: tot });
  });
  return { geo, ctRows };
}

/**
 * Places every Connecticut ZIP of the current crosswalk by its legacy counties, read from HUD's Q4 2020
 * CT rows: a ZIP over legacy counties of different rating areas becomes a multi-area ZIP like any
 * other. A ZIP the 2020 file lacks (one created since) falls back to its planning region's area with a
 * warning that names it; a 2020 ZIP no longer in the current file is not served.
 */
async function placeConnecticut(
  path: string,
  geo: Geography,
  current: readonly CtCurrentRow[],
  j: ZipJoin & { readonly ctRegions: ReadonlySet<string> },
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<void> {
  const currentZips = new Set(current.map((r) => r.zip));
  for (const r of current) {
    let list = geo.planningRegions.get(r.zip);
    if (list === undefined) geo.planningRegions.set(r.zip, (list = []));
    list.push({ fips: r.county.fips, resRatio: r.resRatio });
  }
  for (const list of geo.planningRegions.values()) list.sort((a, b) => b.resRatio - a.resRatio || (a.fips < b.fips ? -1 : 1));
  const placed = new Set<string>();
  const table = await openTable(path, 'ZIP_COUNTY_122020_CT.csv');
  await forEachRow(
    table,
    { required: ['ZIP', 'COUNTY', 'RES_RATIO', 'TOT_RATIO'], stage: 'CT ZIP to legacy county (HUD 2020)' },
    sink,
    progress,
    (row) => {
      const zip = padCode(row.get('ZIP'), 5);
      const fips = padCode(row.get('COUNTY'), 5);
      if (zip === null || fips === null) {
        sink.reject({ ...row.at(zip === null ? 'ZIP' : 'COUNTY'), reason: 'must be a 5-digit code' });
        return;
      }
      const county = j.counties.get(fips);
      if (county === undefined || county.state !== 'CT' || j.ctRegions.has(fips)) {
        sink.reject({
          ...row.at('COUNTY', fips),
          reason: j.ctRegions.has(fips)
            ? 'a planning region, not a legacy county: this file must be HUD’s crosswalk from before 2022 (Connecticut counties 09001–09015)'
            : 'not a Connecticut legacy county (09001–09015) of the Census county list',
        });
        return;
      }
      const res = Number(row.get('RES_RATIO'));
      const tot = Number(row.get('TOT_RATIO'));
      if (!Number.isFinite(res) || !Number.isFinite(tot)) {
        sink.reject({ ...row.at(Number.isFinite(res) ? 'TOT_RATIO' : 'RES_RATIO'), reason: 'ratio is not a number' });
        return;
      }
      if (!currentZips.has(zip)) {
        sink.rowIgnored(table.file); // retired since 2020: the current crosswalk decides which ZIPs exist
        return;
      }
      const area = j.areaOfCounty(county);
      if (area === null) {
        sink.reject({ ...row.at('COUNTY', fips), code: DIAGNOSTIC_CODES.geography, reason: `no rating area for ${county.name}, CT` });
        return;
      }
      placed.add(zip);
      addLocation(geo, zip, { state: 'CT', countyFips: fips, countyName: county.name, ratingArea: area, resRatio: res, totRatio: tot });
    },
  );
  for (const r of current) {
    if (placed.has(r.zip)) continue;
    const area = j.areaOfCounty(r.county);
    if (area === null) continue;
    if (!geo.zips.has(r.zip)) {
      sink.warn({
        file: table.file,
        line: 0,
        column: 0,
        code: DIAGNOSTIC_CODES.geography,
        reason: `ZIP ${r.zip} is not in this file: placed by its planning region ${r.county.fips} (${ratingAreaName(area)}), which may not be the area its town is rated in`,
      });
    }
    addLocation(geo, r.zip, {
      state: 'CT',
      countyFips: r.county.fips,
      countyName: r.county.name,
      ratingArea: area,
      resRatio: r.resRatio,
      totRatio: r.totRatio,
    });
  }
}

function ratingAreaName(area: number): string {
  return `Rating Area ${area}`;
}

function addLocation(geo: Geography, zip: string, loc: Location): void {
  let list = geo.zips.get(zip);
  if (list === undefined) geo.zips.set(zip, (list = []));
  list.push(loc);
  let ca = geo.countyAreas.get(loc.countyFips);
  if (ca === undefined) geo.countyAreas.set(loc.countyFips, (ca = new Set()));
  ca.add(loc.ratingArea);
  let cz = geo.countyZips.get(loc.countyFips);
  if (cz === undefined) geo.countyZips.set(loc.countyFips, (cz = []));
  cz.push(zip);
  let sa = geo.stateAreas.get(loc.state);
  if (sa === undefined) geo.stateAreas.set(loc.state, (sa = new Set()));
  sa.add(loc.ratingArea);
}

/** Primary location first: most residential addresses, then most addresses of any kind, then FIPS. */
export function compareLocations(a: Location, b: Location): number {
  return (
    b.resRatio - a.resRatio ||
    b.totRatio - a.totRatio ||
    (a.countyFips < b.countyFips ? -1 : a.countyFips > b.countyFips ? 1 : a.ratingArea - b.ratingArea)
  );
}
