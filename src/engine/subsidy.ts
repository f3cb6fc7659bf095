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
 * The credit counts only the benchmark's premium for essential health benefits (26 U.S.C.
 * §36B(b)(3)(D); 26 CFR 1.36B-3(j)): where the benchmark plan states an EHB share of its premium below
 * 100 % (Plan Attributes `EHBPercentTotalPremium`, the issuer's allocation under 45 CFR 156.470), the
 * credit is computed from that share and both premiums are reported. Plans are still ranked by their
 * full premium: no source read says the ranking uses the EHB portion. Not modeled: the
 * pediatric-dental SADP add-on (the build carries no stand-alone dental premiums).
 *
 * Pure and synchronous over a loaded {@link Dataset}; money is handled in integer cents and
 * converted to dollars (two decimals) only in the result.
 */
import type { Mutable } from './mutable.ts';
import type { Dataset, ZipLocation } from './dataset.ts';
import { familyTiersOf, householdPremiumCents } from './household.ts';
import { statePremiums } from './manifest.ts';
import { applicablePercentage, povertyGuideline } from './rules.ts';
import { HouseholdRater } from './household-rater.ts';
import { rankLowestCostInto, RankingRecord, type RankedPlan } from './lowest-cost-plans.ts';
import type { TaxYearRules } from './rules-types.ts';
import { InvariantError } from '../invariant.ts';
import { floorSafe, roundHalfUp } from './float-safe-round.ts';
import { applicableBandLabel, CSR_BAND_LABELS } from './fpl-band-labels.ts';

export type BenchmarkSource = 'rate_puf' | 'modeled' | 'benchmark_only';

/**
 * What a member's benchmark amount is: the member's own age-rated premium, or (family-tier states, NY
 * and VT) the member's share of the one premium the tier charges the household.
 */
/** How a member's premium was found: the member's own age rate, or a share of a family tier (NY, VT). */
export const MEMBER_PREMIUM_BASES = ['member_rate', 'tier_share'] as const;
export type MemberPremiumBasis = (typeof MEMBER_PREMIUM_BASES)[number];

export interface AptcMember {
  readonly age: number;
  /** Monthly benchmark premium carried by this member, dollars; 0 when not counted. */
  readonly slcsp_premium: number;
  /** False for children beyond the three oldest under 21. */
  readonly counted_in_benchmark: boolean;
  readonly premium_basis: MemberPremiumBasis;
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
  /** {@link band} in words ({@link applicableBandLabel}); null with it. */
  readonly band_label: string | null;
  /** The poverty-level range of {@link csr_level} in words; null with it. */
  readonly csr_band_label: string | null;
  /** Percent of income (8.59 = 8.59 %); null when not eligible. */
  readonly applicable_percentage: number | null;
  /** Whole dollars a year (Form 8962 line 8a); 0 when not eligible. */
  readonly yearly_contribution: number;
  /** Whole dollars a month (line 8b); 0 when not eligible. */
  readonly monthly_contribution: number;
  /** Monthly benchmark premium for the household, dollars; null when no benchmark exists here. */
  readonly benchmark_premium: number | null;
  /**
   * The part of {@link benchmark_premium} for essential health benefits, which the credit is computed
   * from; null when the benchmark plan states no EHB share below 100 % (the full premium counts).
   */
  readonly benchmark_ehb_premium: number | null;
  /** The benchmark plan's EHB share of its premium (0–1) behind {@link benchmark_ehb_premium}; null with it. */
  readonly benchmark_ehb_share: number | null;
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

/** Where {@link fplPosition} answers: its callers read it at once (an object per estimate was garbage). */
const FPL_POSITION: Mutable<FplPosition> = {
  fpl: 0,
  pct: 0,
  truncated: 0,
  belowFloor: false,
  aboveFourTimes: false,
};

/** The household's place against the poverty guideline, in the module's one record (valid until the next call). */
function fplPosition(rules: TaxYearRules, state: string, income: number, householdSize: number): FplPosition {
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (!Number.isFinite(income) || income < 0) throw new InvariantError(`income must be a non-negative number, got ${income}`);
  const fpl = povertyGuideline(rules, state, householdSize);
  // Multiply before dividing so that whole-dollar incomes at a band edge (e.g. 133 %) land exactly on it.
  const pct = (income * 100) / fpl;
  let truncated = floorSafe(pct);
  // Compared unrounded: 400.9 % truncates to 400 but is above the cliff, which is why line 5 says 401.
  const aboveFourTimes = income > 4 * fpl;
  if (aboveFourTimes && truncated <= 400) truncated = 401;
  const out = FPL_POSITION;
  out.fpl = fpl;
  out.pct = pct;
  out.truncated = truncated;
  out.belowFloor = income * 100 < rules.lower_bound_pct.value * fpl;
  out.aboveFourTimes = aboveFourTimes;
  return out;
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

/** A benchmark priced from the published table (tableBenchmark), for locations without a silver plan list. */
interface Benchmark {
  readonly totalCents: number;
  readonly members: ReadonlyArray<{ readonly age: number; readonly cents: number; readonly counted: boolean }>;
  readonly source: BenchmarkSource;
  readonly notes: readonly string[];
  /** Priced by family tier (members carry shares of the tier premium). */
  readonly tiers: boolean;
}

const MODELED_NOTE =
  'Premiums are modeled from published SLCSP benchmarks (no Rate PUF loaded), so the benchmark plan and its premium are estimates';

/**
 * The benchmark from the location's plans: the second-lowest household total among the silver plans
 * offered there (the lowest when only one is), with the lowest silver and bronze plans, written into
 * `out` (its members' premiums, lowest plans, plan id, source). False when the location lists no silver
 * plan; then `out` holds no benchmark.
 */
function planBenchmarkInto(
  ds: Dataset,
  rules: TaxYearRules,
  location: ZipLocation,
  ages: readonly number[],
  out: AptcEstimateRecord,
  notes: NoteList,
): boolean {
  const rater = out.work.rater;
  const ranking = rankLowestCostInto(ds, rules, location, ages, rater, out.work.ranking);
  if (ranking === null) return false;
  // Only one silver plan offered: that plan is the benchmark (26 CFR 1.36B-3(f)).
  const chosen = ranking.second ?? ranking.first;
  const members = out.membersOf(ages.length);
  let totalCents = 0;
  const counted = rater.rating.counted;
  if (counted !== null) {
    for (let i = 0; i < ages.length; i++) {
      const c = rater.memberCents(chosen.pos, i);
      setMember(members[i]!, ages[i]!, c, counted[i] === true, 'member_rate');
      totalCents += c;
    }
  } else {
    // Family tiers (NY, VT): the tier premium shared out over the members.
    // The chosen plan covers the household: the ranking kept only plans with a total.
    const premium = rater.premium(chosen.pos)!;
    for (let i = 0; i < ages.length; i++)
      setMember(members[i]!, premium.members[i]!.age, premium.members[i]!.cents, premium.members[i]!.counted, 'tier_share');
    totalCents = premium.totalCents;
  }
  out.benchmarkCents = totalCents;
  out.benchmark_plan_id = variantIdOf(chosen.id);
  out.ehbShare = ehbShareOf(ds, out.benchmark_plan_id);
  out.lowest_silver = out.lowestPlan(0, ranking.first);
  out.lowest_bronze = out.lowestPlan(1, ranking.bronze);
  // Provenance is per state: a year may mix real and modeled states.
  out.benchmark_source = statePremiums(ds.manifest, location.state);
  if (out.benchmark_source === 'modeled') notes.add(MODELED_NOTE);
  return true;
}

function setMember(m: Mutable<AptcMember>, age: number, centsOf: number, counted: boolean, basis: MemberPremiumBasis): void {
  m.age = age;
  m.slcsp_premium = cents(centsOf);
  m.counted_in_benchmark = counted;
  m.premium_basis = basis;
}

/** EHB shares of benchmark plans by variant id, per dataset (NaN: none below 100 %), read once per plan. */
const EHB_SHARES = new WeakMap<Dataset, Map<string, number>>();

/** The EHB share (0–1, below 1) of a plan variant's premium, or NaN when it states none below 100 %. */
function ehbShareOf(ds: Dataset, variantId: string): number {
  let shares = EHB_SHARES.get(ds);
  if (shares === undefined) EHB_SHARES.set(ds, (shares = new Map()));
  let share = shares.get(variantId);
  if (share === undefined) {
    const stated = ds.planRecord(variantId)?.ehb_percent_premium ?? null;
    // A share of 1, or a value outside (0, 1) the file should not carry, leaves the full premium.
    share = stated !== null && stated > 0 && stated < 1 ? stated : Number.NaN;
    shares.set(variantId, share);
  }
  return share;
}

/** Variant ids (`…-01`) by plan id, made once per plan. */
const VARIANT_IDS = new Map<string, string>();

function variantIdOf(id: string): string {
  let v = VARIANT_IDS.get(id);
  if (v === undefined) VARIANT_IDS.set(id, (v = `${id}-01`));
  return v;
}

/** Benchmark from the build's per-area SLCSP table, per member, for locations without a silver plan list. */
function tableBenchmark(ds: Dataset, rules: TaxYearRules, location: ZipLocation, ages: readonly number[]): Benchmark | null {
  const values = new Map<number, ReturnType<Dataset['slcsp']>>();
  const lookup = (age: number): ReturnType<Dataset['slcsp']> => {
    if (!values.has(age)) values.set(age, ds.slcsp(location.state, location.ratingArea, age));
    return values.get(age) ?? null;
  };
  // Tier states price from the adult (age-21) rate, so it must exist too.
  const needed = familyTiersOf(rules, location.state) === undefined ? ages : [...ages, 21];
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
  return {
    totalCents: premium.totalCents,
    members: premium.members,
    source,
    notes,
    tiers: familyTiersOf(rules, location.state) !== undefined,
  };
}

/**
 * The household's benchmark written into `out`: from the location's silver plans, else from the
 * published table, else none (a note says so). False when there is none.
 */
function benchmarkInto(
  ds: Dataset,
  rules: TaxYearRules,
  location: ZipLocation,
  ages: readonly number[],
  out: AptcEstimateRecord,
  notes: NoteList,
): boolean {
  let found = planBenchmarkInto(ds, rules, location, ages, out, notes);
  if (!found) {
    const table = tableBenchmark(ds, rules, location, ages);
    found = table !== null;
    if (table !== null) {
      const members = out.membersOf(ages.length);
      for (let i = 0; i < ages.length; i++)
        setMember(
          members[i]!,
          table.members[i]!.age,
          table.members[i]!.cents,
          table.members[i]!.counted,
          table.tiers ? 'tier_share' : 'member_rate',
        );
      out.benchmarkCents = table.totalCents;
      out.benchmark_plan_id = null;
      out.benchmark_source = table.source;
      out.lowest_silver = null;
      out.lowest_bronze = null;
      for (const n of table.notes) notes.add(n);
    }
  }
  if (!found) {
    notes.add(
      `No benchmark premium is available for ${location.state} rating area ${location.ratingArea}, so the credit cannot be estimated here`,
    );
    const members = out.membersOf(ages.length);
    for (let i = 0; i < ages.length; i++) setMember(members[i]!, ages[i]!, 0, false, 'member_rate');
    out.benchmark_plan_id = null;
    out.benchmark_source = null;
    out.lowest_silver = null;
    out.lowest_bronze = null;
  }
  return found;
}

/**
 * Estimates the monthly APTC of a household (domain.md §1.4, docs/compatibility.md#aptc-estimate).
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
  return estimateAptcInto(ds, rules, location, input, new AptcEstimateRecord()).toObject();
}

/** The notes of the estimate being made, gathered before they go into its record (at most a few). */
class NoteList {
  readonly items: string[] = ['', '', '', '', '', '', '', ''];
  count = 0;

  add(note: string): void {
    this.items[this.count++] = note;
  }
}

/**
 * What an estimate is worked out with, kept by the record it is written into: the rater and ranking of
 * the benchmark scan and the notes gathered, each consumed before the estimate returns.
 */
class EstimateWork {
  readonly rater = new HouseholdRater();
  readonly ranking = new RankingRecord();
  readonly notes = new NoteList();
}

interface IncomeNotes {
  readonly belowFloor: string;
  readonly aboveCliff: string;
  readonly aboveNoLimit: string;
}

/** The income notes of a tax year's rules, made once per rules table: they are the same for every estimate of the year. */
const INCOME_NOTES = new WeakMap<TaxYearRules, IncomeNotes>();

function incomeNotesOf(rules: TaxYearRules): IncomeNotes {
  let n = INCOME_NOTES.get(rules);
  if (n === undefined) {
    n = {
      belowFloor:
        rules.lower_bound_pct.value === 100
          ? NOTE_BELOW_100
          : `Income below ${rules.lower_bound_pct.value} % FPL: not eligible for the premium tax credit; Medicaid or the coverage gap may apply`,
      aboveCliff: `Income above 400 % FPL: not eligible for the premium tax credit in ${rules.tax_year} (the 400 % cliff applies)`,
      aboveNoLimit: `Income above 400 % FPL: ${rules.tax_year} has no upper income limit, so the top applicable percentage applies`,
    };
    INCOME_NOTES.set(rules, n);
  }
  return n;
}

/**
 * {@link estimateAptc} written into `out`, whose members, band, lowest plans and notes are its own
 * objects, rewritten by its next estimate: the APTC endpoint and priced searches estimate into a
 * request scratch's record, so an estimate allocates next to nothing.
 */
export function estimateAptcInto(
  ds: Dataset,
  rules: TaxYearRules,
  location: ZipLocation,
  input: AptcInput,
  out: AptcEstimateRecord,
): AptcEstimateRecord {
  const { income, householdSize, ages } = input;
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (ages.length === 0) throw new InvariantError('at least one member must seek coverage');
  const pos = fplPosition(rules, location.state, income, householdSize);
  const notes = out.work.notes;
  notes.count = 0;

  let eligible = true;
  if (pos.belowFloor) {
    eligible = false;
    notes.add(incomeNotesOf(rules).belowFloor);
  } else if (pos.aboveFourTimes && rules.cap_at_400_fpl.value) {
    eligible = false;
    notes.add(incomeNotesOf(rules).aboveCliff);
  } else if (pos.aboveFourTimes) {
    notes.add(incomeNotesOf(rules).aboveNoLimit);
  }

  let applicable: number | null = null;
  out.band = null;
  if (eligible) {
    applicable = applicablePercentage(rules, pos.truncated);
    const bands = rules.applicable_percentage.bands;
    // Outside the table the nearest end band applies, as in applicablePercentage.
    let b = pos.truncated < bands[0].from_pct ? bands[0] : bands[bands.length - 1];
    for (let i = 0; i < bands.length; i++) {
      const x = bands[i]!;
      if (pos.truncated >= x.from_pct && (x.to_pct === null || pos.truncated < x.to_pct)) {
        b = x;
        break;
      }
    }
    out.band = out.bandOf(b.from_pct, b.to_pct);
  }
  out.band_label = out.band === null ? null : applicableBandLabel(out.band.from_pct, out.band.to_pct);
  out.ehbShare = Number.NaN;
  const yearly = applicable === null ? 0 : roundHalfUp((income * applicable) / 100);
  const monthly = roundHalfUp(yearly / 12);

  const found = benchmarkInto(ds, rules, location, ages, out, notes);
  const limit = rules.child_age_limit.value;
  if (found && familyTiersOf(rules, location.state) === undefined) {
    let uncounted = 0;
    const members = out.members;
    for (let i = 0; i < members.length; i++) if (!members[i]!.counted_in_benchmark && members[i]!.age < limit) uncounted++;
    if (uncounted > 0) {
      notes.add(
        `Only the ${rules.max_rated_children.value} oldest children under ${limit} are charged; ${uncounted} younger ${uncounted === 1 ? 'child is' : 'children are'} covered at no premium`,
      );
    }
  }

  // The credit counts the benchmark's EHB portion only (26 U.S.C. §36B(b)(3)(D)).
  const ehbCents = found && !Number.isNaN(out.ehbShare) ? Math.round(out.benchmarkCents * out.ehbShare) : null;
  // The last note; kept as its figures ({@link AptcEstimateRecord.notes} words it).
  out.ehbNotePercent = ehbCents === null ? Number.NaN : round2(out.ehbShare * 100);
  out.ehbNoteCents = ehbCents ?? 0;
  const aptcCents = eligible && found ? Math.max(0, (ehbCents ?? out.benchmarkCents) - monthly * 100) : 0;
  out.eligible = eligible;
  out.fpl_amount = pos.fpl;
  out.fpl_percentage = round2(pos.pct);
  out.fpl_percentage_truncated = pos.truncated;
  out.applicable_percentage = applicable;
  out.yearly_contribution = yearly;
  out.monthly_contribution = monthly;
  out.benchmark_premium = found ? cents(out.benchmarkCents) : null;
  out.benchmark_ehb_premium = ehbCents === null ? null : cents(ehbCents);
  out.benchmark_ehb_share = ehbCents === null ? null : out.ehbShare;
  out.csr_level = eligible ? CSR_LEVEL[csrVariantAt(pos, income) ?? 'none'] : null;
  out.csr_band_label = out.csr_level === null ? null : CSR_BAND_LABELS[out.csr_level];
  out.aptc_amount = cents(aptcCents);
  out.leadingNotes = out.notesOf(notes);
  return out;
}

/**
 * The wording of the note on the benchmark's essential-health-benefits share, around its three figures:
 * the share in percent, the EHB part of the premium and the premium, in dollars with two decimals. The
 * REST writer writes it from these parts and the figures (no string made on the request path);
 * {@link ehbNoteText} makes the text for everything else.
 */
export const EHB_NOTE = {
  before: 'The benchmark plan puts ',
  afterShare: ' % of its premium toward essential health benefits; the credit counts only that part (',
  between: ' of ',
  after: ' a month)',
} as const;

export function ehbNoteText(percent: number, ehbCents: number, benchmarkCents: number): string {
  return `${EHB_NOTE.before}${percent}${EHB_NOTE.afterShare}${cents(ehbCents).toFixed(2)}${EHB_NOTE.between}${cents(benchmarkCents).toFixed(2)}${EHB_NOTE.after}`;
}

/**
 * An estimate's fields ({@link AptcEstimate}), with members, band, lowest plans and note lists of its
 * own that each estimate written into it rewrites ({@link estimateAptcInto}).
 */
export class AptcEstimateRecord implements AptcEstimate {
  eligible = false;
  fpl_amount = 0;
  fpl_percentage = 0;
  fpl_percentage_truncated = 0;
  band: AptcEstimate['band'] = null;
  band_label: string | null = null;
  csr_band_label: string | null = null;
  applicable_percentage: number | null = null;
  yearly_contribution = 0;
  monthly_contribution = 0;
  benchmark_premium: number | null = null;
  benchmark_ehb_premium: number | null = null;
  benchmark_ehb_share: number | null = null;
  benchmark_plan_id: string | null = null;
  benchmark_source: BenchmarkSource | null = null;
  members: readonly AptcMember[] = [];
  csr_level: 94 | 87 | 73 | null = null;
  lowest_silver: LowestPlan | null = null;
  lowest_bronze: LowestPlan | null = null;
  aptc_amount = 0;
  /** The notes before the EHB note, the only one made of the household's figures (which follows them when there is one). */
  leadingNotes: readonly string[] = [];
  /** The EHB note's share in percent; NaN when there is no EHB note. */
  ehbNotePercent = Number.NaN;
  /** The EHB part of the benchmark premium in cents (valid with {@link ehbNotePercent}). */
  ehbNoteCents = 0;
  /** The working memory of the estimates written here. */
  readonly work = new EstimateWork();
  /** The benchmark in cents (valid when {@link benchmark_premium} is not null). */
  benchmarkCents = 0;
  /** The benchmark plan's EHB share below 1, NaN when none (or no plan is the benchmark). */
  ehbShare = Number.NaN;
  readonly #band: Mutable<NonNullable<AptcEstimate['band']>> = { from_pct: 0, to_pct: null };
  readonly #lowest: [Mutable<LowestPlan>, Mutable<LowestPlan>] = [
    { plan_id: '', premium: 0 },
    { plan_id: '', premium: 0 },
  ];
  /** Member lists by household size, their members reused. */
  readonly #members: Array<Mutable<AptcMember>[] | undefined> = [];
  /** Note lists by count, reused. */
  readonly #notes: Array<string[] | undefined> = [];

  /** This record's member list of `n` members (made the current one). */
  membersOf(n: number): Mutable<AptcMember>[] {
    let list = this.#members[n];
    if (list === undefined) {
      list = [];
      for (let i = 0; i < n; i++) list.push({ age: 0, slcsp_premium: 0, counted_in_benchmark: false, premium_basis: 'member_rate' });
      this.#members[n] = list;
    }
    this.members = list;
    return list;
  }

  bandOf(from: number, to: number | null): NonNullable<AptcEstimate['band']> {
    this.#band.from_pct = from;
    this.#band.to_pct = to;
    return this.#band;
  }

  /** Lowest plan `which` (0 silver, 1 bronze) as a record of this estimate, or null. */
  lowestPlan(which: 0 | 1, r: RankedPlan | null): LowestPlan | null {
    if (r === null) return null;
    const p = this.#lowest[which];
    p.plan_id = variantIdOf(r.id);
    p.premium = cents(r.totalCents);
    return p;
  }

  /** Every note, the EHB note worded (a new list when there is one). */
  get notes(): readonly string[] {
    if (Number.isNaN(this.ehbNotePercent)) return this.leadingNotes;
    return [...this.leadingNotes, ehbNoteText(this.ehbNotePercent, this.ehbNoteCents, this.benchmarkCents)];
  }

  notesOf(gathered: NoteList): readonly string[] {
    const n = gathered.count;
    let list = this.#notes[n];
    if (list === undefined) this.#notes[n] = list = new Array<string>(n).fill('');
    for (let i = 0; i < n; i++) list[i] = gathered.items[i]!;
    return list;
  }

  /** The estimate as a plain object (the members, band and lowest plans are this record's). */
  toObject(): AptcEstimate {
    return {
      eligible: this.eligible,
      fpl_amount: this.fpl_amount,
      fpl_percentage: this.fpl_percentage,
      fpl_percentage_truncated: this.fpl_percentage_truncated,
      band: this.band,
      band_label: this.band_label,
      csr_band_label: this.csr_band_label,
      applicable_percentage: this.applicable_percentage,
      yearly_contribution: this.yearly_contribution,
      monthly_contribution: this.monthly_contribution,
      benchmark_premium: this.benchmark_premium,
      benchmark_ehb_premium: this.benchmark_ehb_premium,
      benchmark_ehb_share: this.benchmark_ehb_share,
      benchmark_plan_id: this.benchmark_plan_id,
      benchmark_source: this.benchmark_source,
      members: this.members,
      csr_level: this.csr_level,
      lowest_silver: this.lowest_silver,
      lowest_bronze: this.lowest_bronze,
      aptc_amount: this.aptc_amount,
      notes: this.notes,
    };
  }
}
