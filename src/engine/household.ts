/**
 * @module Household premium rating: the three-child rule and NY/VT-style family tiers.
 *
 * A family premium is not simply "one premium per person". Federal rating (45 CFR 147.102(c)) sums
 * each member's age-rated premium but counts at most the three oldest children under 21, so a fourth
 * young child is free; community-rated states (NY, VT) instead multiply the single-adult rate by a
 * family-tier factor. The APTC benchmark must be priced the same way as the family's real policy
 * (domain.md §4, §5), so both the benchmark search and any household quote go through this module.
 *
 * Everything here is a pure function of its inputs and works in integer cents, so that totals and
 * per-member shares add up exactly and never drift by a float cent.
 */
import type { TaxYearRules } from './rules-types.ts';
import { InvariantError } from '../invariant.ts';
import { upperCaseState } from './state-code.ts';

/** Age whose rate is the single-adult base rate of a community-rated state (CMS age curves: 21 = 1.000). */
export const ADULT_BASE_AGE = 21;

/** Family tier of a community-rated state (domain.md §3.3). */
export type FamilyTier = 'one_adult' | 'two_adults' | 'one_adult_and_children' | 'two_adults_and_children' | 'child_only';

export interface RatedMember {
  readonly age: number;
  /** This member's share of the household premium, cents (0 when not counted). */
  readonly cents: number;
  /** False for children beyond the rated maximum; always true under family tiers (the tier covers everyone). */
  readonly counted: boolean;
}

export interface HouseholdPremium {
  readonly totalCents: number;
  /** In the order of the input ages. */
  readonly members: readonly RatedMember[];
}

function checkAges(ages: readonly number[]): void {
  // An empty household has no premium; a NaN age would silently sort anywhere.
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (ages.length === 0) throw new InvariantError('a household needs at least one member');
  for (const a of ages) {
    if (!Number.isFinite(a) || a < 0) throw new InvariantError(`ages must be non-negative numbers, got ${a}`);
  }
}

/**
 * Which members count toward a per-member family premium (three-child rule, 45 CFR 147.102(c)(1)).
 *
 * Members aged `childAgeLimit` or older are rated as adults and always count (a 22-year-old on a
 * parent's policy is not capped). Among younger members only the `maxRatedChildren` oldest count;
 * equal ages are ranked by their position in `ages`, so the result is deterministic.
 *
 * @returns one flag per member, in the input order.
 * @example ratedMembers([40, 38, 16, 12, 9, 5], 3, 21) → [true, true, true, true, true, false]
 */
export function ratedMembers(ages: readonly number[], maxRatedChildren: number, childAgeLimit: number): boolean[] {
  return ratedMembersInto(ages, maxRatedChildren, childAgeLimit, new Array<boolean>(ages.length));
}

/** {@link ratedMembers} written into `counted` (as long as `ages`). */
function ratedMembersInto(ages: readonly number[], maxRatedChildren: number, childAgeLimit: number, counted: boolean[]): boolean[] {
  // A child's rank among the children: those older, or as old and earlier in `ages`, come first (the
  // order of a stable sort by age, descending). Households are small (≤ 20 members), so ranking by
  // counting allocates nothing but the result, where sorting built an object per member on every
  // estimate and every priced search with an income.
  for (let i = 0; i < ages.length; i++) {
    const a = ages[i]!;
    if (a >= childAgeLimit) {
      counted[i] = true;
      continue;
    }
    let rank = 0;
    for (let j = 0; j < ages.length; j++) {
      const b = ages[j]!;
      if (b < childAgeLimit && (b > a || (b === a && j < i))) rank++;
    }
    counted[i] = rank < maxRatedChildren;
  }
  return counted;
}

/**
 * Family tier of a household in a community-rated state. Adults are members aged `childAgeLimit`
 * (21) or older; everyone younger is a child.
 *
 * More than two adults: the tier is the two-adult tier (with or without children) and
 * {@link householdPremiumCents} adds one single-adult rate per further adult. Tier policies cover a
 * subscriber, a spouse and dependants, so a third adult needs a policy of their own; PolicyEngine-US
 * prices it the same way (`slcsp_family_tier_multiplier`: base tier + extra adults × one_adult).
 */
export function familyTier(ages: readonly number[], childAgeLimit: number): FamilyTier {
  checkAges(ages);
  const adults = adultsOf(ages, childAgeLimit);
  const children = ages.length - adults;
  if (adults === 0) return 'child_only';
  if (adults === 1) return children > 0 ? 'one_adult_and_children' : 'one_adult';
  return children > 0 ? 'two_adults_and_children' : 'two_adults';
}

/**
 * Splits `total` cents over `weights` in proportion, largest remainder first (ties to the earlier
 * member), so the shares are whole cents that add up to the total exactly.
 */
function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  // Equal weights when nothing distinguishes the members (e.g. every rate missing).
  const w = sum > 0 ? weights : weights.map(() => 1);
  const wSum = sum > 0 ? sum : weights.length;
  const exact = w.map((x) => (total * x) / wSum);
  const shares = exact.map((x) => Math.floor(x));
  let left = total - shares.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ frac: x - Math.floor(x), i })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) shares[order[k].i] += 1;
  return shares;
}

/**
 * Monthly premium of a household, in cents.
 *
 * Per-member states (all but those in `rules.family_tiers`): the sum of `perMemberCents(age)` over
 * the members counted by the three-child rule ({@link ratedMembers}); a member who is not counted
 * carries 0 cents.
 *
 * Family-tier states (NY, VT): tier factor × the single-adult rate, which is `perMemberCents(21)`
 * (the age-21 rate is the adult base rate under community rating). Decisions where the sources are
 * silent, documented here so callers can rely on them:
 * - more than two adults: the two-adult tier plus `one_adult` × the adult rate per further adult
 *   (see {@link familyTier});
 * - child-only households where the state has no child-only factor (VT): the oldest child is
 *   treated as the subscriber, so one child pays the `one_adult` tier and several children the
 *   `one_adult_and_children` tier, which is how a tier-rated policy for a child subscriber is priced;
 * - every member is counted (tiers do not cap children), and each member carries a share of the
 *   tier premium proportional to their own age-curve rate `perMemberCents(age)` (NY: a child weighs
 *   0.412 of an adult; VT's flat curve gives equal shares), rounded so the shares add up exactly.
 *
 * @param perMemberCents monthly premium in cents of one member of that age (0 = not sold at that age)
 * @param tierCents family-tier states: the plan's premium for the household's tier as its Rate PUF
 *   gives it ({@link tierColumn}); null: tier factor × the adult rate
 */
export function householdPremiumCents(
  perMemberCents: (age: number) => number,
  ages: readonly number[],
  rules: TaxYearRules,
  state: string,
  tierCents: number | null = null,
): HouseholdPremium {
  const rating = householdRating(ages, rules, state);
  if (rating.counted !== null) {
    const counted = rating.counted;
    const members = ages.map((age, i) => ({ age, counted: counted[i]!, cents: counted[i] ? perMemberCents(age) : 0 }));
    return { totalCents: members.reduce((s, m) => s + m.cents, 0), members };
  }
  // The tier premium the Rate PUF gives for this household, when it has one, wins over the factor.
  const totalCents = tierCents ?? householdTotalCents(rating, perMemberCents);
  const shares = apportion(
    totalCents,
    ages.map((a) => perMemberCents(a)),
  );
  return { totalCents, members: ages.map((age, i) => ({ age, cents: shares[i]!, counted: true })) };
}

/**
 * What {@link householdPremiumCents} derives from the household alone: which members count (per-member
 * states), or the tier factor applied to the adult rate (family-tier states). Pricing many plans for
 * one household (the APTC benchmark scans every silver plan of a location) works it out once and then
 * calls {@link householdTotalCents} per plan, which allocates nothing.
 */
export interface HouseholdRating {
  readonly ages: readonly number[];
  /** Per-member states: one flag per member (three-child rule); null under family tiers. */
  readonly counted: readonly boolean[] | null;
  /** Family-tier states: the factor of the single-adult rate; 0 otherwise. */
  readonly tierFactor: number;
}

export function householdRating(ages: readonly number[], rules: TaxYearRules, state: string): HouseholdRating {
  return householdRatingInto(ages, rules, state, { ages, counted: null, tierFactor: 0 }, new Array<boolean>(ages.length));
}

/**
 * {@link householdRating} written into `out`, with the per-member flags (if any) in `counted` (as long
 * as `ages`): a household search reuses both.
 */
export function householdRatingInto<R extends { ages: readonly number[]; counted: boolean[] | null; tierFactor: number }>(
  ages: readonly number[],
  rules: TaxYearRules,
  state: string,
  out: R,
  counted: boolean[],
): R {
  checkAges(ages);
  const limit = rules.child_age_limit.value;
  out.ages = ages;
  const tiers = familyTiersOf(rules, state);
  if (tiers === undefined) {
    out.counted = ratedMembersInto(ages, rules.max_rated_children.value, limit, counted);
    out.tierFactor = 0;
    return out;
  }
  const tier = familyTier(ages, limit);
  const adults = adultsOf(ages, limit);
  out.counted = null;
  out.tierFactor =
    tier === 'child_only'
      ? (tiers.child_only ?? (ages.length > 1 ? tiers.one_adult_and_children : tiers.one_adult))
      : tiers[tier] + Math.max(0, adults - 2) * tiers.one_adult;
  return out;
}

/** The state's family-tier factors; undefined where members are rated one by one (any spelling of the state). */
export function familyTiersOf(rules: TaxYearRules, state: string): TaxYearRules['family_tiers'][string] | undefined {
  return rules.family_tiers[upperCaseState(state)];
}

/** Members rated as adults (a loop: a household's rating runs per request). */
function adultsOf(ages: readonly number[], childAgeLimit: number): number {
  let adults = 0;
  for (let i = 0; i < ages.length; i++) if (ages[i]! >= childAgeLimit) adults++;
  return adults;
}

/**
 * The column of a Rate PUF family-tier row that prices a household of a community-rated state, or
 * null when no column does (more than two adults, or children only): those keep the tier factors.
 * Dependants are the members under `childAgeLimit`; three or more share one column.
 */
export type TierColumn =
  | 'individual'
  | 'couple'
  | 'primarySubscriberAndOneDependent'
  | 'primarySubscriberAndTwoDependents'
  | 'primarySubscriberAndThreeOrMoreDependents'
  | 'coupleAndOneDependent'
  | 'coupleAndTwoDependents'
  | 'coupleAndThreeOrMoreDependents';

const SUBSCRIBER_COLUMNS: readonly TierColumn[] = [
  'individual',
  'primarySubscriberAndOneDependent',
  'primarySubscriberAndTwoDependents',
  'primarySubscriberAndThreeOrMoreDependents',
];
const COUPLE_COLUMNS: readonly TierColumn[] = [
  'couple',
  'coupleAndOneDependent',
  'coupleAndTwoDependents',
  'coupleAndThreeOrMoreDependents',
];

export function tierColumn(ages: readonly number[], childAgeLimit: number): TierColumn | null {
  checkAges(ages);
  const adults = adultsOf(ages, childAgeLimit);
  const dependants = Math.min(3, ages.length - adults);
  if (adults === 1) return SUBSCRIBER_COLUMNS[dependants]!;
  if (adults === 2) return COUPLE_COLUMNS[dependants]!;
  return null;
}

/** The household's monthly premium in cents for one plan, whose per-member rate is `perMemberCents`. */
export function householdTotalCents(rating: HouseholdRating, perMemberCents: (age: number) => number): number {
  const counted = rating.counted;
  if (counted === null) return Math.round(rating.tierFactor * perMemberCents(ADULT_BASE_AGE));
  let total = 0;
  for (let i = 0; i < counted.length; i++) if (counted[i]) total += perMemberCents(rating.ages[i]!);
  return total;
}
