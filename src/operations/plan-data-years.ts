/**
 * @module Where else a state has plan data: an answer that lacks plan data for its state and year names
 * the loaded years that have it (and links to them). What such an answer was priced from is in
 * benchmark-data.ts.
 */
import type { DataRegistry } from './data-registry.ts';
import { HAL_LINK } from './shared-schemas.ts';

export const PLAN_DATA_YEARS = {
  type: 'array',
  items: { type: 'integer' },
  description:
    'Loaded plan years whose build has plan data (plans and premiums) for the state, ascending; empty when none has. When plan_year is not among them, pass one as year for plan-level answers',
} as const;

export const PLAN_DATA_YEAR_LINKS = {
  type: 'array',
  description: 'The same request in each loaded year with plan data for the state (present only when this year has none)',
  items: HAL_LINK,
} as const;

const NO_YEARS: readonly number[] = [];
const BY_REGISTRY = new WeakMap<DataRegistry, Map<string, readonly number[]>>();

/** Loaded years with plan data for `state`, ascending (one list per registry and state). */
export function planDataYears(registry: DataRegistry, state: string): readonly number[] {
  let byState = BY_REGISTRY.get(registry);
  if (byState === undefined) BY_REGISTRY.set(registry, (byState = new Map()));
  let years = byState.get(state);
  if (years === undefined) {
    const found = registry.years.filter((y) => registry.get(y)?.statesWithPlans.has(state) === true);
    years = found.length === 0 ? NO_YEARS : found;
    byState.set(state, years);
  }
  return years;
}

/**
 * The clause a "no plan data" answer ends with: which loaded years have the state's plans; empty when
 * none has (plan_data_years, where the answer has it, says so as an empty list).
 */
export function planDataYearsClause(state: string, years: readonly number[]): string {
  if (years.length === 0) return '';
  return `; plan data for ${state} is loaded for ${years.join(', ')} (pass year=${years.at(-1)})`;
}
