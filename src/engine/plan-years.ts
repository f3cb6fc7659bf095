/**
 * @module The plan years the service knows, in two ranges declared here and nowhere else.
 *
 * - The API accepts 2014–2030 (the public API, docs/compatibility.md#shared-query-parameters): a year inside it that is not
 *   loaded is a 400 naming the loaded years, one outside it a range error.
 * - A year can be built only with its own rules table (data/rules/<year>.json: a build never borrows
 *   another year's poverty guidelines or limits), so the CLI's year arguments run from the first table
 *   to the last. That range must lie inside the API's, checked when this module loads, so no build can
 *   be made that the API would refuse to query.
 */
import { InvariantError } from '../invariant.ts';
import { availableRuleYears } from './rules.ts';

export const API_YEAR_MIN = 2014;
export const API_YEAR_MAX = 2030;

const YEARS = availableRuleYears();

export const PLAN_YEAR_MIN: number = YEARS[0] ?? 0;
export const PLAN_YEAR_MAX: number = YEARS.at(-1) ?? 0;

if (PLAN_YEAR_MIN < API_YEAR_MIN || PLAN_YEAR_MAX > API_YEAR_MAX)
  throw new InvariantError(
    `data/rules holds tables for ${PLAN_YEAR_MIN}–${PLAN_YEAR_MAX}, outside the API's plan years ${API_YEAR_MIN}–${API_YEAR_MAX}`,
  );

/** Whether `year` has a rules table: a year that can be built. */
export function isPlanYear(year: number): boolean {
  return Number.isInteger(year) && year >= PLAN_YEAR_MIN && year <= PLAN_YEAR_MAX;
}

/** The buildable range as people read it, e.g. 2024–2026. */
export const PLAN_YEAR_RANGE_TEXT = `${PLAN_YEAR_MIN}–${PLAN_YEAR_MAX}`;

/** The API's range as people read it. */
export const API_YEAR_RANGE_TEXT = `${API_YEAR_MIN}–${API_YEAR_MAX}`;
