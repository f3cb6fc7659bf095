/**
 * @module County-name keys for joining Census counties to the name-keyed rating-area table.
 *
 * The rating-area table is keyed by upper-case names with inconsistent suffixes, apostrophes turned into
 * underscores and hyphens dropped (`PRINCE_GEORGE_S_COUNTY_MD`, `VALDEZCORDOVA_AK`, `DONA_ANA_NM`). Both
 * sides are reduced to the same key (shared/data/README.md §6.2): ASCII, A–Z/0–9 only, one trailing
 * county-type suffix removed. `CITY` is deliberately kept: independent cities share names with counties
 * and can sit in other rating areas (Richmond city VA = 7, Richmond County VA = 12).
 */

const SUFFIXES = [
  '_CITY_AND_BOROUGH',
  '_CENSUS_AREA',
  '_COUNTY',
  '_PARISH',
  '_BOROUGH',
  '_MUNICIPALITY',
  '_MUNICIPIO',
  '_PLANNING_REGION',
] as const;

/**
 * Join key of a county name.
 * @example countyNameKey("St. Mary's County") === 'STMARYS'; countyNameKey('Doña Ana County') === 'DONAANA'
 */
export function countyNameKey(name: string): string {
  let s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z0-9 _]/g, '')
    .trim()
    .replace(/\s+/g, '_');
  for (const suffix of SUFFIXES) {
    if (s.endsWith(suffix) && s.length > suffix.length) {
      s = s.slice(0, -suffix.length);
      break;
    }
  }
  return s.replaceAll('_', '');
}

/**
 * Splits a rating-area table key `<NAME>_<ST>` into the state and the name key.
 * @example splitTableKey('HARRIS_COUNTY_TX') → { state: 'TX', key: 'HARRIS' }
 */
export function splitTableKey(tableKey: string): { state: string; key: string } | null {
  const m = /^(.*)_([A-Z]{2})$/.exec(tableKey.trim().toUpperCase());
  if (m === null) return null;
  return { state: m[2]!, key: countyNameKey(m[1]!.replaceAll('_', ' ')) };
}
