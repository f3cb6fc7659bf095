/**
 * @module The plan years the service knows: those from the first to the last rules table in
 * data/rules/<year>.json. A plan year's credit, poverty guidelines and limits come from its own table
 * (a build never borrows another year's), so a year outside them can be neither built nor served: the
 * API's `year` range and the CLI's year arguments are this one range, and a new year's table widens it.
 */
import { availableRuleYears } from './rules.ts';

const YEARS = availableRuleYears();

export const PLAN_YEAR_MIN: number = YEARS[0] ?? 0;
export const PLAN_YEAR_MAX: number = YEARS.at(-1) ?? 0;

/** Whether `year` is an integer in the plan-year range. */
export function isPlanYear(year: number): boolean {
  return Number.isInteger(year) && year >= PLAN_YEAR_MIN && year <= PLAN_YEAR_MAX;
}

/** The range as people read it, e.g. 2024–2026. */
export const PLAN_YEAR_RANGE_TEXT = `${PLAN_YEAR_MIN}–${PLAN_YEAR_MAX}`;
