/** @module A plan-year argument of the command line, checked against the years with a rules table. */
import { isPlanYear, PLAN_YEAR_RANGE_TEXT } from '../engine/plan-years.ts';
import { UsageError } from './usage-error.ts';

/**
 * The plan year `text` names; a usage error naming `what` (e.g. `--year`) when it is absent or not a
 * year with a rules table (data/rules/YEAR.json: a year without one can be neither built nor served).
 */
export function planYearArg(text: string | undefined, what: string): number {
  if (text === undefined) throw new UsageError(`${what} YEAR is required (a plan year, ${PLAN_YEAR_RANGE_TEXT})`);
  const year = Number(text);
  if (!/^\d{4}$/.test(text) || !isPlanYear(year))
    throw new UsageError(`${what} must be a plan year with a rules table in data/rules (${PLAN_YEAR_RANGE_TEXT}), got "${text}"`);
  return year;
}
