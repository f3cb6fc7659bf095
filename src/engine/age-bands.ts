/**
 * @module Age bands of the individual market (45 CFR 147.102(d), PY2018 on): one band 0–14, one-year
 * bands 15–63, one band 64 and over. Every premium table in a build has exactly these 51 columns, so an
 * age maps to a column with arithmetic, never with a lookup.
 */

/** Number of rated age bands: 0–14, 15 … 63, 64+. */
export const AGE_BAND_COUNT = 51;
/** Highest age the API accepts; it is priced in the 64-and-over band. */
export const MAX_AGE = 65;

/**
 * Column of an age in a premium table.
 * @example ageBand(3) === 0; ageBand(15) === 1; ageBand(40) === 26; ageBand(65) === 50
 */
export function ageBand(age: number): number {
  if (age <= 14) return 0;
  if (age >= 64) return 50;
  return age - 14;
}

/** The Rate PUF `Age` label of a band: "0-14", "15" … "63", "64 and over". */
export function ageBandLabel(band: number): string {
  if (band === 0) return '0-14';
  if (band === 50) return '64 and over';
  return String(band + 14);
}

/** Representative age of a band (the lowest age in it). */
export function bandAge(band: number): number {
  return band === 0 ? 0 : band + 14;
}
