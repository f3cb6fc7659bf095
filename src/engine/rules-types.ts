/**
 * @module Shapes of the tax-year rule tables in `data/rules/<tax-year>.json`.
 *
 * Rules are data, not code: a new tax year (or a retroactive law change) is a new or edited JSON file.
 * Every value carries the URL(s) it was taken from, so a reviewer can check it against the official
 * document; `confidence` repeats the tag of `shared/docs/domain.md` ([V], [V2], [M], derived).
 */

export type Confidence = 'V' | 'V2' | 'M' | 'derived';

export interface SourceRef {
  /** Official or secondary URLs the value was taken from. */
  readonly sources: readonly string[];
  readonly confidence: Confidence;
  readonly note?: string;
}

export interface Sourced<T> extends SourceRef {
  readonly value: T;
}

/** Annual poverty guideline: first person plus each additional person (guideline(n) = first + (n − 1) × additional). */
export interface PovertyGuideline {
  readonly first_person: number;
  readonly additional_person: number;
}

export interface FplRules extends SourceRef {
  /** Guideline year used for this tax year (coverage year Y uses the guidelines published in Y − 1). */
  readonly guideline_year: number;
  /** 48 contiguous states and DC. */
  readonly contiguous: PovertyGuideline;
  readonly AK: PovertyGuideline;
  readonly HI: PovertyGuideline;
}

/**
 * One band of the applicable-percentage table, on %FPL truncated to a whole percent.
 * A band covers `from_pct <= pct < to_pct` (`to_pct` null = no upper end); the applicable percentage
 * rises linearly from `initial_pct` to `final_pct` across the band (equal values = flat band).
 */
export interface ApplicableBand {
  readonly from_pct: number;
  readonly to_pct: number | null;
  readonly initial_pct: number;
  readonly final_pct: number;
}

export interface ApplicablePercentageRules extends SourceRef {
  readonly bands: readonly ApplicableBand[];
}

/**
 * An age curve as factors relative to age 21 (= 1.000, CMS terms), one per age band:
 * index 0 = ages 0–14, index k = age 14 + k for k in 1…49, index 50 = 64 and over (51 entries).
 */
export interface AgeCurve extends SourceRef {
  readonly factors: readonly number[];
}

export interface FamilyTierRules extends SourceRef {
  readonly one_adult: number;
  readonly two_adults: number;
  readonly one_adult_and_children: number;
  readonly two_adults_and_children: number;
  /** null where the state has no child-only tier (VT). */
  readonly child_only: number | null;
}

export interface TaxYearRules {
  readonly tax_year: number;
  readonly fpl: FplRules;
  readonly applicable_percentage: ApplicablePercentageRules;
  /** Lowest %FPL eligible for the credit (100). */
  readonly lower_bound_pct: Sourced<number>;
  /** True when income above 400 % FPL is ineligible (the cliff): 2014–2020 and 2026 on; false 2021–2025. */
  readonly cap_at_400_fpl: Sourced<boolean>;
  /** Required contribution percentage (employer affordability test), percent. */
  readonly required_contribution_pct: Sourced<number>;
  /** Children under 21 whose premiums count toward a family premium (three-child rule). */
  readonly max_rated_children: Sourced<number>;
  /** Age under which a child counts toward the three-child rule (21). */
  readonly child_age_limit: Sourced<number>;
  /** Maximum annual limit on cost sharing, dollars. */
  readonly moop_limit: Sourced<{ readonly self_only: number; readonly other_than_self_only: number }>;
  readonly age_curves: {
    /** Federal default curve. */
    readonly default: AgeCurve;
    /** State-established curves by two-letter state code (AL, DC, MA, MN, MS, OR, UT, and NY/VT community rating). */
    readonly states: Readonly<Record<string, AgeCurve>>;
  };
  /** Community-rated states using family tiers instead of per-member age rating. */
  readonly family_tiers: Readonly<Record<string, FamilyTierRules>>;
}
