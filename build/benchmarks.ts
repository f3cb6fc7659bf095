/**
 * @module Loader of the SLCSP benchmark table (PolicyEngine-US `state_rating_area_cost.yaml`).
 *
 * Monthly second-lowest-cost silver premiums per state and rating area, normalised to the 0–14 age band
 * (NY and VT: the base adult premium), keyed by effective date. Derived by PolicyEngine from KFF's
 * calculator: an approximation, not CMS data, and labelled so wherever it is used.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';

/**
 * `ST:area` → monthly amount in force on January 1 of the year, with the newest effective date among
 * the values taken (the vintage answers cite: a benchmark-only answer names it rather than borrow the
 * date of another file).
 */
export type BenchmarkTable = Map<string, number> & { inForce?: string };

export function benchmarkKey(state: string, area: number): string {
  return `${state}:${area}`;
}

/** Reads the value in force on `year`-01-01 for every state and area (the latest date not after it). */
export function loadBenchmarks(path: string, year: number): BenchmarkTable {
  // yaml 2.x keeps `2018-01-01` keys as strings (js-yaml would turn them into Dates).
  const doc = parseYaml(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const out: BenchmarkTable = new Map();
  const cutoff = `${year}-01-01`;
  let newest = '';
  for (const [state, areas] of Object.entries(doc)) {
    if (!/^[A-Z]{2}$/.test(state) || typeof areas !== 'object' || areas === null) continue;
    for (const [areaKey, dated] of Object.entries(areas as Record<string, unknown>)) {
      const area = Number(areaKey);
      if (!Number.isInteger(area) || typeof dated !== 'object' || dated === null) continue;
      let best: [string, number] | null = null;
      for (const [date, value] of Object.entries(dated as Record<string, unknown>)) {
        const v = typeof value === 'number' ? value : Number(String(value).replaceAll('_', ''));
        if (!Number.isFinite(v) || date > cutoff) continue;
        if (best === null || date > best[0]) best = [date, v];
      }
      if (best === null) continue;
      out.set(benchmarkKey(state, area), best[1]);
      if (best[0] > newest) newest = best[0];
    }
  }
  if (out.size === 0) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${path}: no benchmark in force on ${cutoff}`);
  }
  out.inForce = newest;
  return out;
}
