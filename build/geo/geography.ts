/**
 * @module National geography: every ZIP of the 50 states and DC → one or more locations
 * {state, county, rating area, residential share}.
 *
 * Rating areas are built from counties, except where a state (AK, ID, MA, NE) or a county (Los Angeles)
 * is rated by 3-digit ZIP. A ZIP that spans counties or rating areas keeps every candidate, ordered by
 * the HUD residential ratio, because the API prices the primary location by default but lets the caller
 * pick another with `county_fips`.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DIAGNOSTIC_CODES, FatalBuildError, type DiagnosticSink } from '../read/diagnostics.ts';
import { openTable } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';
import { countyNameKey, splitTableKey } from './county-name-key.ts';

export interface GeographyConfig {
  readonly zip3_states: { readonly value: readonly string[] };
  readonly zip3_counties: { readonly value: Readonly<Record<string, string>> };
  readonly county_table_2014_states: { readonly value: readonly string[] };
  readonly county_aliases: { readonly value: Readonly<Record<string, { key: string; why: string }>> };
  readonly county_areas: { readonly value: Readonly<Record<string, { area: number; why: string }>> };
  readonly jurisdictions: { readonly value: readonly string[] };
  readonly state_exchange_states: { readonly value: readonly string[] };
}

export interface County {
  readonly fips: string;
  readonly state: string;
  readonly name: string;
}

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
}

export interface GeographyInputs {
  readonly hud: string;
  readonly countyNames: string;
  readonly ctRegions: string;
  readonly countyAreas: string;
  readonly countyAreas2014: string;
  readonly zip3Areas: string;
  readonly laZip3: string;
}

/** Reads the geography inputs and joins them. */
export async function loadGeography(
  inputs: GeographyInputs,
  config: GeographyConfig,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<Geography> {
  const jurisdictions = new Set(config.jurisdictions.value);
  const counties = new Map<string, County>();
  const stateFips = new Map<string, string>();

  const census = await openTable(inputs.countyNames, 'county_fips_2020.csv');
  await forEachRow(census, { required: ['state_code', 'state_fips', 'full_fips', 'county_name'], stage: 'county names' }, sink, progress, (row) => {
    const fips = padCode(row.get('full_fips'), 5);
    const state = row.get('state_code');
    if (fips === null) {
      sink.reject({ file: census.file, line: row.line, column: row.col('full_fips'), columnName: 'full_fips', value: row.get('full_fips'), reason: 'not a 5-digit county FIPS code' });
      return;
    }
    stateFips.set(fips.slice(0, 2), state);
    counties.set(fips, { fips, state, name: row.get('county_name') });
  });
  const ct = await openTable(inputs.ctRegions, 'ct_planning_regions_2022.csv');
  await forEachRow(ct, { required: ['state_code', 'county_fips', 'county_name'], stage: 'CT planning regions' }, sink, progress, (row) => {
    const fips = padCode(row.get('county_fips'), 5);
    if (fips === null) {
      sink.reject({ file: ct.file, line: row.line, column: row.col('county_fips'), columnName: 'county_fips', value: row.get('county_fips'), reason: 'not a 5-digit county FIPS code' });
      return;
    }
    counties.set(fips, { fips, state: row.get('state_code'), name: row.get('county_name') });
  });

  // Name-keyed current table: state → name key → area.
  const byName = new Map<string, number>();
  const tableByState = new Map<string, Map<string, number>>();
  const current = await openTable(inputs.countyAreas, 'county_rating_areas.csv');
  await forEachRow(current, { required: ['county', 'rating_area'], stage: 'county rating areas' }, sink, progress, (row) => {
    const split = splitTableKey(row.get('county'));
    const area = Number(row.get('rating_area'));
    if (split === null || !Number.isInteger(area) || area < 1) {
      sink.reject({ file: current.file, line: row.line, column: row.col('county'), columnName: 'county', value: row.get('county'), reason: 'not a <NAME>_<ST> key with a positive rating area' });
      return;
    }
    byName.set(`${split.state}:${split.key}`, area);
    let m = tableByState.get(split.state);
    if (m === undefined) tableByState.set(split.state, (m = new Map()));
    m.set(split.key, area);
  });

  const byFips2014 = new Map<string, number>();
  const old = await openTable(inputs.countyAreas2014, 'county_rating_areas_2014.csv');
  await forEachRow(old, { required: ['countyfip', 'ratingarea'], stage: 'county rating areas 2014' }, sink, progress, (row) => {
    const area = row.get('ratingarea');
    if (area === '') return; // ZIP3-rated places have no county value
    const fips = padCode(row.get('countyfip'), 5);
    if (fips === null || !/^\d+$/.test(area)) {
      sink.reject({ file: old.file, line: row.line, column: row.col('countyfip'), columnName: 'countyfip', value: `${row.get('countyfip')}/${area}`, reason: 'not a county FIPS code with a rating area number' });
      return;
    }
    byFips2014.set(fips, Number(area));
  });

  const zip3 = new Map<string, number>(); // "ST:995" → area
  const z3 = await openTable(inputs.zip3Areas, 'zip3_rating_areas_2014.csv');
  await forEachRow(z3, { required: ['statefip', 'ratingarea', 'zip3'], stage: 'ZIP3 rating areas' }, sink, progress, (row) => {
    const st = stateFips.get(padCode(row.get('statefip'), 2) ?? '');
    const z = padCode(row.get('zip3'), 3);
    if (st === undefined || z === null || !/^\d+$/.test(row.get('ratingarea'))) {
      sink.reject({ file: z3.file, line: row.line, column: row.col('zip3'), columnName: 'zip3', value: row.get('zip3'), reason: 'not a state FIPS, ZIP3 and rating area' });
      return;
    }
    zip3.set(`${st}:${z}`, Number(row.get('ratingarea')));
  });

  const countyZip3 = new Map<string, Map<string, number>>(); // county fips → zip3 → area
  for (const [fips, input] of Object.entries(config.zip3_counties.value)) {
    if (input !== 'la_county_zip3') continue;
    const doc = parseYaml(readFileSync(inputs.laZip3, 'utf8')) as Record<string, unknown>;
    const m = new Map<string, number>();
    for (const [k, v] of Object.entries(doc)) {
      if (!/^\d{3}$/.test(k) || typeof v !== 'object' || v === null) continue;
      const values = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
      const last = values.at(-1)?.[1];
      if (typeof last === 'number') m.set(k, last);
    }
    if (m.size === 0) {
      throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${inputs.laZip3}: no ZIP3 → rating area entries found`);
    }
    countyZip3.set(fips, m);
  }

  const zip3States = new Set(config.zip3_states.value);
  const prefer2014 = new Set(config.county_table_2014_states.value);
  const countyArea = (c: County): number | null => {
    const manual = config.county_areas.value[c.fips];
    if (manual !== undefined) return manual.area;
    if (prefer2014.has(c.state)) {
      const a = byFips2014.get(c.fips);
      if (a !== undefined) return a;
    }
    const alias = config.county_aliases.value[c.fips];
    if (alias !== undefined) {
      const split = splitTableKey(alias.key);
      if (split !== null) return byName.get(`${split.state}:${split.key}`) ?? null;
    }
    const a = byName.get(`${c.state}:${countyNameKey(c.name)}`);
    if (a !== undefined) return a;
    // A one-area state needs no name match.
    const areas = tableByState.get(c.state);
    if (areas !== undefined && new Set(areas.values()).size === 1) return areas.values().next().value ?? null;
    return null;
  };
  const countyAreaCache = new Map<string, number | null>();
  const areaOfCounty = (c: County): number | null => {
    let a = countyAreaCache.get(c.fips);
    if (a === undefined) {
      a = countyArea(c);
      countyAreaCache.set(c.fips, a);
    }
    return a;
  };

  const zips = new Map<string, Location[]>();
  const countyAreas = new Map<string, Set<number>>();
  const countyZips = new Map<string, string[]>();
  const stateAreas = new Map<string, Set<number>>();
  const warnedZip3 = new Set<string>();
  const hud = await openTable(inputs.hud, 'ZIP_COUNTY_122024.csv');
  await forEachRow(hud, { required: ['ZIP', 'COUNTY', 'RES_RATIO', 'TOT_RATIO'], stage: 'ZIP to county (HUD)' }, sink, progress, (row) => {
    const zip = padCode(row.get('ZIP'), 5);
    const fips = padCode(row.get('COUNTY'), 5);
    if (zip === null || fips === null) {
      const bad = zip === null ? 'ZIP' : 'COUNTY';
      sink.reject({ file: hud.file, line: row.line, column: row.col(bad), columnName: bad, value: row.get(bad), reason: 'must be a 5-digit code' });
      return;
    }
    const state = stateFips.get(fips.slice(0, 2));
    if (state === undefined || !jurisdictions.has(state)) {
      sink.rowIgnored(hud.file); // territories have no ACA rating areas
      return;
    }
    const county = counties.get(fips);
    if (county === undefined) {
      sink.reject({ file: hud.file, line: row.line, column: row.col('COUNTY'), columnName: 'COUNTY', value: fips, reason: 'county FIPS not in the Census county list' });
      return;
    }
    const res = Number(row.get('RES_RATIO'));
    const tot = Number(row.get('TOT_RATIO'));
    if (!Number.isFinite(res) || !Number.isFinite(tot)) {
      sink.reject({ file: hud.file, line: row.line, column: row.col('RES_RATIO'), columnName: 'RES_RATIO', value: row.get('RES_RATIO'), reason: 'ratio is not a number' });
      return;
    }
    let area: number | null = null;
    const z3 = zip.slice(0, 3);
    const byCountyZip3 = countyZip3.get(fips);
    if (byCountyZip3 !== undefined) area = byCountyZip3.get(z3) ?? null;
    else if (zip3States.has(state)) area = zip3.get(`${state}:${z3}`) ?? null;
    if (area === null && (byCountyZip3 !== undefined || zip3States.has(state))) {
      const key = `${fips}:${z3}`;
      if (!warnedZip3.has(key)) {
        warnedZip3.add(key);
        sink.warn({ file: hud.file, line: row.line, column: row.col('ZIP'), columnName: 'ZIP', value: zip, code: DIAGNOSTIC_CODES.geography, reason: `ZIP3 ${z3} has no rating area in the ZIP3 table; using the county's area` });
      }
    }
    area ??= areaOfCounty(county);
    if (area === null) {
      sink.reject({ file: hud.file, line: row.line, column: row.col('COUNTY'), columnName: 'COUNTY', value: fips, code: DIAGNOSTIC_CODES.geography, reason: `no rating area for ${county.name}, ${state}` });
      return;
    }
    const loc: Location = { state, countyFips: fips, countyName: county.name, ratingArea: area, resRatio: res, totRatio: tot };
    let list = zips.get(zip);
    if (list === undefined) zips.set(zip, (list = []));
    list.push(loc);
    let ca = countyAreas.get(fips);
    if (ca === undefined) countyAreas.set(fips, (ca = new Set()));
    ca.add(area);
    let cz = countyZips.get(fips);
    if (cz === undefined) countyZips.set(fips, (cz = []));
    cz.push(zip);
    let sa = stateAreas.get(state);
    if (sa === undefined) stateAreas.set(state, (sa = new Set()));
    sa.add(area);
  });
  for (const list of zips.values()) list.sort(compareLocations);
  // Counties with no ZIP rows (rare) still need an area for service-area coverage.
  for (const c of counties.values()) {
    if (!jurisdictions.has(c.state) || countyAreas.has(c.fips)) continue;
    const a = areaOfCounty(c);
    if (a !== null) countyAreas.set(c.fips, new Set([a]));
  }
  return { zips, counties, countyAreas, countyZips, stateAreas, stateFips };
}

/** Primary location first: most residential addresses, then most addresses of any kind, then FIPS. */
export function compareLocations(a: Location, b: Location): number {
  return b.resRatio - a.resRatio || b.totRatio - a.totRatio || (a.countyFips < b.countyFips ? -1 : a.countyFips > b.countyFips ? 1 : a.ratingArea - b.ratingArea);
}
