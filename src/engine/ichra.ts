/**
 * @module The ICHRA affordability test (26 CFR 1.36B-2(c)(5)): an individual-coverage HRA is affordable
 * for an employee when the monthly premium of the lowest-cost silver plan (LCSP), for the employee alone at
 * the employee's age and location, less the monthly HRA amount, is at most the year's required
 * contribution percentage × household income ÷ 12 (8.39 % for 2024, 9.02 % for 2025, 9.96 % for 2026:
 * Rev. Proc. 2023-29, 2024-35, 2025-25, in the rules tables).
 *
 * Money is compared in exact cents: the threshold is not rounded before the comparison, so a cost one
 * cent above it is unaffordable however the rounded figure reads. The premium is the plan's full
 * premium; the rule's wellness-incentive and non-calendar-year look-back options are not modeled.
 */
import type { Dataset, ZipLocation } from './dataset.ts';
import type { TaxYearRules } from './rules-types.ts';
import { rankLowestCost } from './lowest-cost-plans.ts';

export interface IchraInput {
  /** The employee's age. */
  readonly age: number;
  /** Annual household income, dollars. */
  readonly income: number;
  /** Monthly self-only HRA amount the employer offers, cents. */
  readonly hraCents: number;
}

export interface IchraAffordability {
  /** Plan index in the dataset of the lowest-cost silver plan. */
  readonly lcspPlan: number;
  /** Standard component id of that plan. */
  readonly lcspId: string;
  /** Its monthly premium for the employee alone, cents. */
  readonly lcspCents: number;
  /** Percent units (9.02 = 9.02 %). */
  readonly requiredContributionPct: number;
  /** Income × percentage ÷ 12, cents, rounded half up for display only. */
  readonly thresholdCents: number;
  /** max(0, LCSP − HRA), cents. */
  readonly employeeCostCents: number;
  readonly affordable: boolean;
  /** The smallest monthly HRA, in whole cents, that makes the offer affordable (0 when none is needed). */
  readonly minAffordableHraCents: number;
}

/** Cleans binary representation error (1503.0000000000002) before a comparison or a rounding. */
function clean(x: number): number {
  return Number(x.toPrecision(12));
}

/** The test at one location, or null when the location lists no qualifying silver plan. */
export function ichraAffordability(ds: Dataset, rules: TaxYearRules, location: ZipLocation, input: IchraInput): IchraAffordability | null {
  const ranking = rankLowestCost(ds, rules, location, [input.age]);
  if (ranking === null) return null;
  const lcsp = ranking.first;
  const pct = rules.required_contribution_pct.value;
  // income (dollars) × pct (percent) ÷ 12 is the threshold in cents: × 100 for cents, ÷ 100 for percent.
  const threshold = clean((input.income * pct) / 12);
  const cost = Math.max(0, lcsp.totalCents - input.hraCents);
  return {
    lcspPlan: ds.listPlan(location.listId, lcsp.pos),
    lcspId: lcsp.id,
    lcspCents: lcsp.totalCents,
    requiredContributionPct: pct,
    thresholdCents: Math.floor(threshold + 0.5),
    employeeCostCents: cost,
    affordable: cost <= threshold,
    minAffordableHraCents: Math.max(0, Math.ceil(clean(lcsp.totalCents - threshold))),
  };
}
