/**
 * @module APTC (advance premium tax credit) estimate for a household at one location, and the
 * cost-sharing-reduction variant a household qualifies for.
 *
 * The arithmetic follows IRS Form 8962 (domain.md §1.4, §1.6) because that is what the credit is
 * finally reconciled against: %FPL truncated to a whole percent for the band, the applicable
 * percentage rounded to 0.01 %, whole-dollar yearly and monthly contributions. The benchmark is the
 * second-lowest-cost silver plan *for this household* (domain.md §5): plans are ranked by the
 * household total (three-child rule or NY/VT tiers), not by one age, because child-only plans,
 * unsold ages and tiers can reorder them. Where the build has no plan premiums for the state, the
 * benchmark falls back to the rating area's SLCSP table and says it is a KFF-derived approximation.
 *
 * Not modeled (domain.md §5): the EHB-portion adjustment and the pediatric-dental SADP add-on. The
 * build carries no stand-alone dental premiums, and the plan list holds full premiums only, so plans
 * are ranked and the benchmark is reported at their full premium.
 *
 * Pure and synchronous over a loaded {@link Dataset}; money is handled in integer cents and
 * converted to dollars (two decimals) only in the result.
 */
import type { Dataset, ZipLocation } from './dataset.ts';
import { householdPremiumCents } from './household.ts';
import { statePremiums } from './manifest.ts';
import { applicablePercentage, povertyGuideline } from './rules.ts';
import { rankLowestCost } from './lowest-cost-plans.ts';
import type { TaxYearRules } from './rules-types.ts';
import { InvariantError } from '../invariant.ts';

export type BenchmarkSource = 'rate_puf' | 'modeled' | 'benchmark_only';

export interface AptcMember {
  readonly age: number;
  /** Monthly benchmark premium carried by this member, dollars; 0 when not counted. */
  readonly slcsp_premium: number;
  /** False for children beyond the three oldest under 21. */
  readonly counted_in_benchmark: boolean;
}

export interface AptcEstimate {
  /** Income within the credit's bounds (≥ 100 % FPL; ≤ 400 % FPL in years with the cliff). */
  readonly eligible: boolean;
  /** 100 % poverty guideline for the household, dollars a year. */
  readonly fpl_amount: number;
  /** income ÷ FPL × 100, rounded to 2 decimals (display only). */
  readonly fpl_percentage: number;
  /** Form 8962 line 5: %FPL with decimals dropped, 401 when income exceeds 4 × FPL by less than 1 %. */
  readonly fpl_percentage_truncated: number;
  /** Applicable-percentage band used; null when not eligible. */
  readonly band: { readonly from_pct: number; readonly to_pct: number | null } | null;
  /** Percent of income (8.59 = 8.59 %); null when not eligible. */
  readonly applicable_percentage: number | null;
  /** Whole dollars a year (Form 8962 line 8a); 0 when not eligible. */
  readonly yearly_contribution: number;
  /** Whole dollars a month (line 8b); 0 when not eligible. */
  readonly monthly_contribution: number;
  /** Monthly benchmark premium for the household, dollars; null when no benchmark exists here. */
  readonly benchmark_premium: number | null;
  /** Variant id (`…-01`) of the benchmark plan; null when the benchmark is not a plan of the build. */
  readonly benchmark_plan_id: string | null;
  /** null only together with a null benchmark. */
  readonly benchmark_source: BenchmarkSource | null;
  /** In the order of the input ages. */
  readonly members: readonly AptcMember[];
  /** Actuarial value of the silver CSR variant the income qualifies for (94, 87, 73); null outside 100–250 % FPL or when not eligible. */
  readonly csr_level: 94 | 87 | 73 | null;
  /** The household's lowest-cost silver plan (variant `…-01`) and its monthly household premium; null without plan data here. */
  readonly lowest_silver: LowestPlan | null;
  /** The household's lowest-cost bronze or expanded bronze plan; null without plan data or bronze plans here. */
  readonly lowest_bronze: LowestPlan | null;
  /** Monthly APTC, dollars. */
  readonly aptc_amount: number;
  readonly notes: readonly string[];
}

export interface LowestPlan {
  readonly plan_id: string;
  /** Monthly premium for the household, dollars (rated as the benchmark is). */
  readonly premium: number;
}

export interface AptcInput {
  /** Annual household income (MAGI), dollars. */
  readonly income: number;
  /** Members of the tax household, for the poverty guideline. */
  readonly householdSize: number;
  /** Ages of the members seeking coverage. */
  readonly ages: readonly number[];
}

export const NOTE_BELOW_100 = 'Income below 100 % FPL: not eligible for the premium tax credit; Medicaid or the coverage gap may apply';

/** Float-safe rounding: toPrecision(12) first absorbs representation error (2106.0000000000005, 175.49999…). */
function roundHalfUp(x: number): number {
  return Math.round(Number(x.toPrecision(12)));
}

function round2(x: number): number {
  return roundHalfUp(x * 100) / 100;
}

const cents = (c: number): number => c / 100;

interface FplPosition {
  readonly fpl: number;
  /** Unrounded income ÷ FPL × 100. */
  readonly pct: number;
  /** Form 8962 line 5. */
  readonly truncated: number;
  readonly belowFloor: boolean;
  readonly aboveFourTimes: boolean;
}

function fplPosition(rules: TaxYearRules, state: string, income: number, householdSize: number): FplPosition {
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (!Number.isFinite(income) || income < 0) throw new InvariantError(`income must be a non-negative number, got ${income}`);
  const fpl = povertyGuideline(rules, state, householdSize);
  // Multiply before dividing so that whole-dollar incomes at a band edge (e.g. 133 %) land exactly on it.
  const pct = (income * 100) / fpl;
  let truncated = Math.floor(Number(pct.toPrecision(12)));
  // Compared unrounded: 400.9 % truncates to 400 but is above the cliff, which is why line 5 says 401.
  const aboveFourTimes = income > 4 * fpl;
  if (aboveFourTimes && truncated <= 400) truncated = 401;
  return { fpl, pct, truncated, belowFloor: income * 100 < rules.lower_bound_pct.value * fpl, aboveFourTimes };
}

/**
 * Silver cost-sharing-reduction variant for a household (45 CFR 155.305(g)(2)): `06` (94 % AV) at
 * 100–150 % FPL, `05` (87 %) above 150 up to 200 %, `04` (73 %) above 200 up to 250 %; null outside
 * 100–250 % (and whenever the household cannot get the credit, which CSR requires).
 *
 * The regulation's bands include their upper end (≤ 150 %, ≤ 200 %, ≤ 250 %), so they are tested on
 * the unrounded ratio: 150.4 % is already "more than 150 %", which the truncated 150 would hide.
 */
export function csrVariantFor(rules: TaxYearRules, income: number, householdSize: number, state: string): '04' | '05' | '06' | null {
  return csrVariantAt(fplPosition(rules, state, income, householdSize), income);
}

/** {@link csrVariantFor} at a poverty-level position already worked out. */
function csrVariantAt(pos: FplPosition, income: number): '04' | '05' | '06' | null {
  if (pos.belowFloor) return null;
  const x = income * 100;
  if (x <= 150 * pos.fpl) return '06';
  if (x <= 200 * pos.fpl) return '05';
  if (x <= 250 * pos.fpl) return '04';
  return null;
}

/** Actuarial value of each silver CSR variant (45 CFR 156.420(a)). */
const CSR_LEVEL = { '06': 94, '05': 87, '04': 73, none: null } as const;

interface Benchmark {
  readonly lowestSilver: LowestPlan | null;
  readonly lowestBronze: LowestPlan | null;
  readonly totalCents: number;
  readonly members: ReadonlyArray<{ readonly age: number; readonly cents: number; readonly counted: boolean }>;
  readonly planId: string | null;
  readonly source: BenchmarkSource;
  readonly notes: readonly string[];
}

/**
 * Second-lowest household total among the benchmark-eligible silver plans offered at the location,
 * or null when the location lists no such plan.
 */
function planBenchmark(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]): Benchmark | null {
  const ranking = rankLowestCost(ds, rules, location, ages);
  if (ranking === null) return null;
  // Only one silver plan offered: that plan is the benchmark (26 CFR 1.36B-3(f)).
  const chosen = ranking.second ?? ranking.first;
  // The chosen plan covers the household: the ranking kept only plans with a total.
  const premium = ranking.rater.premium(chosen.pos)!;
  // Provenance is per state: a year may mix real and modeled states.
  const source: BenchmarkSource = statePremiums(ds.manifest, location.state);
  const notes =
    source === 'modeled'
      ? ['Premiums are modeled from published SLCSP benchmarks (no Rate PUF loaded), so the benchmark plan and its premium are estimates']
      : [];
  const lowest = (r: { id: string; totalCents: number } | null): LowestPlan | null =>
    r === null ? null : { plan_id: `${r.id}-01`, premium: cents(r.totalCents) };
  return {
    lowestSilver: lowest(ranking.first),
    lowestBronze: lowest(ranking.bronze),
    totalCents: premium.totalCents,
    members: premium.members,
    planId: `${chosen.id}-01`,
    source,
    notes,
  };
}

/** Benchmark from the build's per-area SLCSP table, per member, for locations without a silver plan list. */
function tableBenchmark(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]): Benchmark | null {
  const values = new Map<number, ReturnType<Dataset['slcsp']>>();
  const lookup = (age: number): ReturnType<Dataset['slcsp']> => {
    if (!values.has(age)) values.set(age, ds.slcsp(location.state, location.ratingArea, age));
    return values.get(age) ?? null;
  };
  // Tier states price from the adult (age-21) rate, so it must exist too.
  const needed = rules.family_tiers[location.state.toUpperCase()] === undefined ? ages : [...ages, 21];
  if (needed.some((a) => lookup(a) === null)) return null;
  const premium = householdPremiumCents((age) => Math.round((lookup(age)?.amount ?? 0) * 100), ages, rules, location.state);
  const source: BenchmarkSource = lookup(ages[0])?.source ?? 'benchmark_only';
  const notes =
    source === 'benchmark_only'
      ? [
          `No plan premiums are loaded for ${location.state}: the benchmark premium is an approximation derived from KFF benchmark data (second-lowest-cost silver premium of rating area ${location.ratingArea}, age-rated per member)`,
        ]
      : [
          `No silver plan is listed at this location: the benchmark is the SLCSP of ${location.state} rating area ${location.ratingArea}, age-rated per member`,
        ];
  return { lowestSilver: null, lowestBronze: null, totalCents: premium.totalCents, members: premium.members, planId: null, source, notes };
}

/**
 * Estimates the monthly APTC of a household (domain.md §1.4, api-contract §5.5).
 *
 * - FPL: the rules' guideline table for the location's state (AK and HI have their own) and
 *   `householdSize`.
 * - Eligibility: income ≥ 100 % FPL, and ≤ 4 × FPL (unrounded) in years with the cliff; 2021–2025
 *   have no upper bound and keep the top rate.
 * - Contribution: round(income × applicable % / 100) a year, round(yearly / 12) a month.
 * - APTC: max(0, benchmark − monthly contribution) when eligible, else 0. The benchmark and member
 *   premiums are reported either way, because they still tell the household what silver costs.
 */
export function estimateAptc(ds: Dataset, rules: TaxYearRules, location: ZipLocation, input: AptcInput): AptcEstimate {
  const { income, householdSize, ages } = input;
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (ages.length === 0) throw new InvariantError('at least one member must seek coverage');
  const pos = fplPosition(rules, location.state, income, householdSize);
  const notes: string[] = [];

  let eligible = true;
  if (pos.belowFloor) {
    eligible = false;
    notes.push(
      rules.lower_bound_pct.value === 100
        ? NOTE_BELOW_100
        : `Income below ${rules.lower_bound_pct.value} % FPL: not eligible for the premium tax credit; Medicaid or the coverage gap may apply`,
    );
  } else if (pos.aboveFourTimes && rules.cap_at_400_fpl.value) {
    eligible = false;
    notes.push(`Income above 400 % FPL: not eligible for the premium tax credit in ${rules.tax_year} (the 400 % cliff applies)`);
  } else if (pos.aboveFourTimes) {
    notes.push(`Income above 400 % FPL: ${rules.tax_year} has no upper income limit, so the top applicable percentage applies`);
  }

  let applicable: number | null = null;
  let band: AptcEstimate['band'] = null;
  if (eligible) {
    applicable = applicablePercentage(rules, pos.truncated);
    const bands = rules.applicable_percentage.bands;
    // Outside the table the nearest end band applies, as in applicablePercentage.
    const b =
      bands.find((x) => pos.truncated >= x.from_pct && (x.to_pct === null || pos.truncated < x.to_pct)) ??
      (pos.truncated < bands[0].from_pct ? bands[0] : bands[bands.length - 1]);
    band = { from_pct: b.from_pct, to_pct: b.to_pct };
  }
  const yearly = applicable === null ? 0 : roundHalfUp((income * applicable) / 100);
  const monthly = roundHalfUp(yearly / 12);

  const bench = planBenchmark(ds, rules, location, ages) ?? tableBenchmark(ds, rules, location, ages);
  if (bench === null) {
    notes.push(
      `No benchmark premium is available for ${location.state} rating area ${location.ratingArea}, so the credit cannot be estimated here`,
    );
  } else {
    notes.push(...bench.notes);
  }
  const limit = rules.child_age_limit.value;
  const members: AptcMember[] =
    bench === null
      ? ages.map((age) => ({ age, slcsp_premium: 0, counted_in_benchmark: false }))
      : bench.members.map((m) => ({ age: m.age, slcsp_premium: cents(m.cents), counted_in_benchmark: m.counted }));
  if (bench !== null && rules.family_tiers[location.state.toUpperCase()] === undefined) {
    const uncounted = bench.members.filter((m) => !m.counted && m.age < limit).length;
    if (uncounted > 0) {
      notes.push(
        `Only the ${rules.max_rated_children.value} oldest children under ${limit} are charged; ${uncounted} younger ${uncounted === 1 ? 'child is' : 'children are'} covered at no premium`,
      );
    }
  }

  const aptcCents = eligible && bench !== null ? Math.max(0, bench.totalCents - monthly * 100) : 0;
  return {
    eligible,
    fpl_amount: pos.fpl,
    fpl_percentage: round2(pos.pct),
    fpl_percentage_truncated: pos.truncated,
    band,
    applicable_percentage: applicable,
    yearly_contribution: yearly,
    monthly_contribution: monthly,
    benchmark_premium: bench === null ? null : cents(bench.totalCents),
    benchmark_plan_id: bench?.planId ?? null,
    benchmark_source: bench?.source ?? null,
    members,
    csr_level: eligible ? CSR_LEVEL[csrVariantAt(pos, income) ?? 'none'] : null,
    lowest_silver: bench?.lowestSilver ?? null,
    lowest_bronze: bench?.lowestBronze ?? null,
    aptc_amount: cents(aptcCents),
    notes,
  };
}
