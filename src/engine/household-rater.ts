/**
 * @module One household's premium for the plans of one location: the APTC benchmark, the
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
import { ageBand } from './age-bands.ts';
import {
  ADULT_BASE_AGE,
  householdPremiumCents,
  householdRatingInto,
  tierColumn,
  type HouseholdPremium,
  type RatedMember,
  type TierColumn,
} from './household.ts';
import type { TaxYearRules } from './rules-types.ts';

export class HouseholdRater {
  ds: Dataset = undefined as unknown as Dataset;
  rules: TaxYearRules = undefined as unknown as TaxYearRules;
  location: ZipLocation = undefined as unknown as ZipLocation;
  ages: readonly number[] = [];
  /** Who is charged, or the tier factor (this rater's own record, rewritten by {@link set}). */
  readonly rating: { ages: readonly number[]; counted: boolean[] | null; tierFactor: number } = { ages: [], counted: null, tierFactor: 0 };
  /** The family-tier column of community-rated states; null where members are rated one by one. */
  column: TierColumn | null = null;
  hasAdult = false;
  /** First entry of the location's list; -1 when it lists no plans. */
  #base = -1;
  /**
   * Per member, where the list's premiums for the member's age band start in the entry columns: a list's
   * premiums for one band are contiguous, so pricing a whole list reads a few short runs (search prices
   * every plan of the list for every household request; the premium-pair table is 5 MB of cache misses).
   */
  #memberAt = new Int32Array(20);
  #members = 0;
  /** The same for the single-adult age (tier factor × the adult rate). */
  #adultAt = 0;
  /** The `counted` flags by household size, reused by every household this rater prices. */
  readonly #counted: boolean[][] = [];

  constructor(ds?: Dataset, rules?: TaxYearRules, location?: ZipLocation, ages?: readonly number[]) {
    if (ds !== undefined) this.set(ds, rules!, location!, ages!);
  }

  /**
   * Makes this the rater of `ages` at `location` (a rater is reused by its owner's requests: what it
   * held before, `rating` included, is rewritten).
   */
  set(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]): this {
    this.ds = ds;
    this.rules = rules;
    this.location = location;
    this.ages = ages;
    const n = ages.length;
    const counted = (this.#counted[n] ??= new Array<boolean>(n).fill(false));
    householdRatingInto(ages, rules, location.state, this.rating, counted);
    this.column = this.rating.counted === null ? tierColumn(ages, rules.child_age_limit.value) : null;
    // Loops, not some()/from() with closures: a rater is set per household request.
    const limit = rules.child_age_limit.value;
    let hasAdult = false;
    const { listStart, entryCount } = ds.columns;
    const base = location.listId === NO_LIST ? -1 : listStart[location.listId]!;
    if (this.#memberAt.length < n) this.#memberAt = new Int32Array(n);
    const memberAt = this.#memberAt;
    for (let i = 0; i < n; i++) {
      const a = ages[i]!;
      if (a >= limit) hasAdult = true;
      memberAt[i] = ageBand(a) * entryCount + base;
    }
    this.#members = n;
    this.hasAdult = hasAdult;
    this.#base = base;
    this.#adultAt = ageBand(ADULT_BASE_AGE) * entryCount + base;
    return this;
  }

  /** The household's monthly total in cents for the plan at a list position; 0 when the plan cannot cover the household. */
  total(pos: number): number {
    if (this.#base < 0) return 0;
    const { entryCents, entryFlags, entryPlan } = this.ds.columns;
    const e = this.#base + pos;
    if (this.hasAdult && (entryFlags[e]! & PLAN_FLAG.childOnly) !== 0) return 0;
    const at = this.#memberAt;
    const counted = this.rating.counted;
    let sum = 0;
    for (let i = 0; i < this.#members; i++) {
      const c = entryCents[at[i]! + pos]!;
      if (c === 0) return 0;
      if (counted === null || counted[i]) sum += c;
    }
    if (counted !== null) return sum;
    const tier =
      this.column === null
        ? null
        : this.ds.familyTierCents(this.ds.plan(entryPlan[e]!).standardComponentId, this.location.ratingArea, this.column);
    const total = tier ?? Math.round(this.rating.tierFactor * entryCents[this.#adultAt + pos]!);
    return total > 0 ? total : 0;
  }

  /**
   * Under per-member rating (`rating.counted` not null): member `i`'s premium for the plan at `pos`, in
   * cents, 0 when the member is not charged (householdPremiumCents' rule, with no closure or rating).
   */
  memberCents(pos: number, i: number): number {
    return this.rating.counted![i] === true ? this.ds.listPremiumCents(this.location.listId, pos, this.ages[i]!) : 0;
  }

  /** The total and each member's share of it (in the order of the ages); null when the plan cannot cover the household. */
  premium(pos: number): HouseholdPremium | null {
    if (this.total(pos) === 0) return null;
    const counted = this.rating.counted;
    if (counted !== null) {
      const members = this.ages.map((age, i): RatedMember => ({ age, counted: counted[i] === true, cents: this.memberCents(pos, i) }));
      let totalCents = 0;
      for (const m of members) totalCents += m.cents;
      return { totalCents, members };
    }
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
