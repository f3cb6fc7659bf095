/**
 * @module What premium_with_credit must be for a fixture plan, by the rule: the premium less
 * the APTC, never below 0, the credit never paying the share that is not for essential health benefits
 * (EHBPercentTotalPremium below 1; one fixture bronze plan has 0.9), nothing off a catastrophic plan.
 */
import { FIXTURE_PLANS } from './fixture-inputs.ts';

const EHB = new Map(FIXTURE_PLANS.map((p) => [p.scid, Number(p.ehbPercent ?? '1.0')]));

/** In cents, for a plan variant id (or standard component id) and its metal level as answered. */
export function fixtureCreditCents(planId: string, metal: string, premiumCents: number, aptcCents: number): number {
  if (metal === 'catastrophic') return premiumCents;
  const ehb = EHB.get(planId.slice(0, 14)) ?? 1;
  const credit = ehb < 1 ? Math.min(aptcCents, Math.round(premiumCents * ehb)) : aptcCents;
  return Math.max(0, premiumCents - credit);
}
