/**
 * @module One plan priced for a household at a location, with each member's share: what
 * plan detail, compare and the OOP estimate show for `ages`. The total is the household rater's, the
 * number search sorts by and the APTC benchmark ranks by.
 */
import { HouseholdRater } from '../engine/household-rater.ts';
import type { MemberPremiumBasis } from '../engine/subsidy.ts';
import type { ResolvedLocation } from './location.ts';
import type { YearData } from './data-registry.ts';
import { notFound } from './problems.ts';

export interface MemberPremium {
  readonly age: number;
  /** The member's monthly share of the household premium, dollars; 0 when not charged. */
  readonly premium: number;
  readonly charged: boolean;
  /** The member's own age-rated premium, or a share of the one premium a family tier charges (NY, VT). */
  readonly premium_basis: MemberPremiumBasis;
}

export interface HouseholdQuote {
  readonly totalCents: number;
  readonly members: readonly MemberPremium[];
}

/**
 * The household's premium for a plan offered at the location. A plan the location does not list, or
 * that cannot cover every member (not sold at some member's age, or child-only for a household with an
 * adult), is a 404 saying which, as a single age's unlisted plan is.
 */
export function quoteHousehold(
  yd: YearData,
  where: ResolvedLocation,
  planIndex: number,
  planId: string,
  ages: readonly number[],
): HouseholdQuote {
  const rater = new HouseholdRater(yd.ds, yd.rules, where.loc, ages);
  const pos = rater.positionOf(planIndex);
  if (pos < 0) throw notFound(`Plan ${planId} is not offered in ZIP ${where.loc.zip}.`);
  const premium = rater.premium(pos);
  if (premium === null) {
    throw notFound(
      `Plan ${planId} cannot cover this household in ZIP ${where.loc.zip}: it is not sold at every member’s age, or it is a child-only plan and the household has an adult.`,
    );
  }
  const basis: MemberPremiumBasis = rater.rating.counted === null ? 'tier_share' : 'member_rate';
  return {
    totalCents: premium.totalCents,
    members: premium.members.map((m) => ({ age: m.age, premium: m.cents / 100, charged: m.counted, premium_basis: basis })),
  };
}
