/**
 * @module The rating area of a whole county: the manual decisions of the geography config first, then
 * the 2014 FIPS-keyed table for the states that prefer it, then the current name-keyed table (through an
 * alias or the county-name key), and for a one-area state that area.
 */
import type { ProgressSink } from '../progress.ts';
import type { DiagnosticSink } from '../read/diagnostics.ts';
import { openTable } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode } from '../read/values.ts';
import { countyNameKey, splitTableKey } from './county-name-key.ts';
import type { County } from './county.ts';
import type { GeographyConfig } from './geography-config.ts';

export interface CountyAreaTables {
  /** "ST:NAMEKEY" → area, from the current name-keyed table. */
  readonly byName: Map<string, number>;
  /** State → name key → area, the same table grouped by state. */
  readonly tableByState: Map<string, Map<string, number>>;
  /** County FIPS → area, from the 2014 table. */
  readonly byFips2014: Map<string, number>;
}

/** Reads the current name-keyed county table, then the 2014 FIPS-keyed one. */
export async function readCountyAreaTables(
  inputs: { readonly countyAreas: string; readonly countyAreas2014: string },
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<CountyAreaTables> {
  const byName = new Map<string, number>();
  const tableByState = new Map<string, Map<string, number>>();
  const current = await openTable(inputs.countyAreas, 'county_rating_areas.csv');
  await forEachRow(current, { required: ['county', 'rating_area'], stage: 'county rating areas' }, sink, progress, (row) => {
    const split = splitTableKey(row.get('county'));
    const area = Number(row.get('rating_area'));
    if (split === null || !Number.isInteger(area) || area < 1) {
      sink.reject({
        ...row.at('county'),
        reason: 'not a <NAME>_<ST> key with a positive rating area',
      });
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
      sink.reject({
        ...row.at('countyfip', `${row.get('countyfip')}/${area}`),
        reason: 'not a county FIPS code with a rating area number',
      });
      return;
    }
    byFips2014.set(fips, Number(area));
  });
  return { byName, tableByState, byFips2014 };
}

/** County → its rating area (null when none is known), memoised per county. */
export function countyAreaResolver(config: GeographyConfig, tables: CountyAreaTables): (c: County) => number | null {
  const { byName, tableByState, byFips2014 } = tables;
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
  const cache = new Map<string, number | null>();
  return (c: County): number | null => {
    let a = cache.get(c.fips);
    if (a === undefined) {
      a = countyArea(c);
      cache.set(c.fips, a);
    }
    return a;
  };
}
