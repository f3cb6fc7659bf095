/**
 * @module One household's premium for the plans of one location (issue #24 §1): the APTC benchmark, the
 * lowest-cost plans, search, compare, detail and the OOP estimate all price a family through here, so a
 * plan's household total is the same number wherever it is shown.
 *
 * A plan can cover the household when it is rated at every member's age (a plan not sold at some
 * member's age cannot cover the whole family, counted or not) and, when the household has an adult, is
 * not a child-only plan. Its total is the file's family-tier amount in community-rated states where the
 * Rate PUF gives one, else the three-child rule or the tier factor over the age-rated premiums
 * (household.ts).
 */
import { NO_LIST, PLAN_FLAG } from './build-format.ts';
import type { Dataset, ZipLocation } from './dataset.ts';
import {
  householdPremiumCents,
  householdRating,
  householdTotalCents,
  tierColumn,
  type HouseholdPremium,
  type HouseholdRating,
  type TierColumn,
} from './household.ts';
import type { TaxYearRules } from './rules-types.ts';

export class HouseholdRater {
  readonly ds: Dataset;
  readonly rules: TaxYearRules;
  readonly location: ZipLocation;
  readonly ages: readonly number[];
  readonly rating: HouseholdRating;
  /** The family-tier column of community-rated states; null where members are rated one by one. */
  readonly column: TierColumn | null;
  readonly hasAdult: boolean;
  /** The position {@link at} reads: one closure serves a whole scan, allocating nothing per plan. */
  #pos = 0;
  readonly #at = (age: number): number => this.ds.listPremiumCents(this.location.listId, this.#pos, age);

  constructor(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]) {
    this.ds = ds;
    this.rules = rules;
    this.location = location;
    this.ages = ages;
    this.rating = householdRating(ages, rules, location.state);
    this.column = this.rating.counted === null ? tierColumn(ages, rules.child_age_limit.value) : null;
    this.hasAdult = ages.some((a) => a >= rules.child_age_limit.value);
  }

  /** The household's monthly total in cents for the plan at a list position; 0 when the plan cannot cover the household. */
  total(pos: number): number {
    if (this.location.listId === NO_LIST) return 0;
    const plan = this.ds.plan(this.ds.listPlan(this.location.listId, pos));
    if (this.hasAdult && (plan.flags & PLAN_FLAG.childOnly) !== 0) return 0;
    this.#pos = pos;
    const ages = this.ages;
    for (let i = 0; i < ages.length; i++) if (this.#at(ages[i]!) === 0) return 0;
    const tier = this.column === null ? null : this.ds.familyTierCents(plan.standardComponentId, this.location.ratingArea, this.column);
    const total = tier ?? householdTotalCents(this.rating, this.#at);
    return total > 0 ? total : 0;
  }

  /** The total and each member's share of it (in the order of the ages); null when the plan cannot cover the household. */
  premium(pos: number): HouseholdPremium | null {
    if (this.total(pos) === 0) return null;
    const listId = this.location.listId;
    const id = this.ds.plan(this.ds.listPlan(listId, pos)).standardComponentId;
    return householdPremiumCents(
      (age) => this.ds.listPremiumCents(listId, pos, age),
      this.ages,
      this.rules,
      this.location.state,
      this.column === null ? null : this.ds.familyTierCents(id, this.location.ratingArea, this.column),
    );
  }

  /** The list position of a plan index at this location, or -1 when the location does not list it. */
  positionOf(planIndex: number): number {
    const listId = this.location.listId;
    if (listId === NO_LIST) return -1;
    const n = this.ds.listSize(listId);
    for (let k = 0; k < n; k++) if (this.ds.listPlan(listId, k) === planIndex) return k;
    return -1;
  }
}
