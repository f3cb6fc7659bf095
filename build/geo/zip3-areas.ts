/**
 * @module Rating areas of the places rated by 3-digit ZIP: whole states (the 2014 ZIP3 table) and single
 * counties (Los Angeles, from its own YAML file of ZIP3 → area by year).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { ProgressSink } from '../progress.ts';
import { DIAGNOSTIC_CODES, FatalBuildError, type DiagnosticSink } from '../read/diagnostics.ts';
import { openTable } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode } from '../read/values.ts';
import type { GeographyConfig } from './geography-config.ts';

/** "ST:995" → area, for the ZIP3-rated states. */
export async function readZip3Areas(
  path: string,
  stateFips: ReadonlyMap<string, string>,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<Map<string, number>> {
  const zip3 = new Map<string, number>();
  const z3 = await openTable(path, 'zip3_rating_areas_2014.csv');
  await forEachRow(z3, { required: ['statefip', 'ratingarea', 'zip3'], stage: 'ZIP3 rating areas' }, sink, progress, (row) => {
    const st = stateFips.get(padCode(row.get('statefip'), 2) ?? '');
    const z = padCode(row.get('zip3'), 3);
    if (st === undefined || z === null || !/^\d+$/.test(row.get('ratingarea'))) {
      sink.reject({
        ...row.at('zip3'),
        reason: 'not a state FIPS, ZIP3 and rating area',
      });
      return;
    }
    zip3.set(`${st}:${z}`, Number(row.get('ratingarea')));
  });
  return zip3;
}

/** County FIPS → ZIP3 → area, for the ZIP3-rated counties of the config (the latest year of each ZIP3). */
export function readCountyZip3(config: GeographyConfig, laZip3: string): Map<string, Map<string, number>> {
  const countyZip3 = new Map<string, Map<string, number>>();
  for (const [fips, input] of Object.entries(config.zip3_counties.value)) {
    if (input !== 'la_county_zip3') continue;
    const doc = parseYaml(readFileSync(laZip3, 'utf8')) as Record<string, unknown>;
    const m = new Map<string, number>();
    for (const [k, v] of Object.entries(doc)) {
      if (!/^\d{3}$/.test(k) || typeof v !== 'object' || v === null) continue;
      const values = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
      const last = values.at(-1)?.[1];
      if (typeof last === 'number') m.set(k, last);
    }
    if (m.size === 0) {
      throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${laZip3}: no ZIP3 → rating area entries found`);
    }
    countyZip3.set(fips, m);
  }
  return countyZip3;
}
