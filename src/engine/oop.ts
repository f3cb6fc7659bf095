/**
 * @module Out-of-pocket (OOP) estimate of one plan for one person and one usage scenario
 * (docs/compatibility.md#out-of-pocket-estimate, domain.md §9–10).
 *
 * Two sources, and the response says which one was used (`sbc_data_available`):
 *
 * 1. `having_baby`, `having_diabetes`: the plan's own SBC coverage example from the Plan Attributes
 *    PUF. The member pays deductible + copayment + coinsurance + limits/exclusions, exactly as the
 *    issuer printed it on the SBC, so nothing is modeled. A plan without those values falls back to
 *    the heuristic below, priced on the SBC example's total allowed cost.
 *
 * 2. `low`, `medium`, `high`: a heuristic, because the Benefits and Cost Sharing PUF (per-service
 *    copays) is not loaded and only plan-level fields are available: the individual in-network
 *    deductible, the plan-level coinsurance, the individual MOOP and the two primary-care fields.
 *    It is a one-person version of the HealthCare.gov OOPC method (domain.md §10.1–10.2):
 *
 *    - A year of care is fixed per scenario as in-network allowed amounts (what the insurer and
 *      member pay together), see {@link HEURISTIC_SCENARIOS}. Preventive care is left out: in-network
 *      EHB preventive care costs the member $0.
 *    - Primary-care visits: the first `BeginPrimaryCareCostSharingAfterNumberOfVisits` are free; the
 *      next `BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays` cost a copay before the
 *      deductible (the PUF gives the count, not the amount, so {@link ASSUMED_PCP_COPAY} is used; as
 *      in the OOPC model these copays do not count toward the deductible). Other visits join the rest.
 *    - Deductible first on the rest, then coinsurance (the plan's rate, 20 % when it reports none).
 *    - The total is capped at the individual MOOP (the year's legal maximum when the plan has none).
 *
 *    Closed form (domain.md §10.2): OOP = min(MOOP, copays + min(D, S) + c × max(0, S − D)).
 *    Because the scenarios only ever add care from low to high and every term is non-decreasing in
 *    care, low ≤ medium ≤ high holds for every plan, and every result is ≤ the MOOP.
 *
 *    Calibration [M, modeled]: the levels mirror the HealthCare.gov OOPC deciles (low = decile 3,
 *    medium = 5.5, high = 10; CMSgov/oopc-calculations), i.e. about the 30th, 55th and 90th–95th
 *    percentiles of yearly spending of privately insured adults. MEPS (AHRQ Statistical Briefs #540
 *    for 2019 and #560 for 2022) fixes the shape that the figures respect: about 14 % of people have no
 *    spending, the bottom half accounts for under 3 % of spending, and the top 1 % starts at $78,125
 *    (2019). The dollar figures themselves are a judgement consistent with that shape, not values
 *    read from a MEPS table, and every heuristic response says they are modeled.
 *
 * All arithmetic is in integer cents so that the breakdown reconciles exactly:
 * estimated_out_of_pocket = deductible_applied + copay_applied + coinsurance_applied + limits_or_exclusions.
 */
import type { PlanVariantRecord, SbcScenario } from './plan-record.ts';
import type { TaxYearRules } from './rules-types.ts';
import { InvariantError } from '../invariant.ts';

export const OOP_SCENARIOS = ['low', 'medium', 'high', 'having_baby', 'having_diabetes'] as const;
export type OopScenario = (typeof OOP_SCENARIOS)[number];
export type HeuristicLevel = 'low' | 'medium' | 'high';

export interface OopBreakdown {
  /** 12 × the monthly premium, dollars. */
  readonly annual_premium: number;
  readonly estimated_out_of_pocket: number;
  readonly deductible_applied: number;
  readonly coinsurance_applied: number;
  readonly copay_applied: number;
  /** SBC "Limits or exclusions" share; 0 for heuristic estimates. */
  readonly limits_or_exclusions: number;
}

export interface OopEstimate {
  readonly scenario: OopScenario;
  readonly monthly_premium: number;
  /** annual_premium + estimated_out_of_pocket, dollars. */
  readonly estimated_annual_cost: number;
  /** False when the heuristic was used. */
  readonly sbc_data_available: boolean;
  readonly breakdown: OopBreakdown;
  readonly notes: readonly string[];
}

/** A modeled year of in-network care for one person, in allowed dollars. */
export interface UtilizationScenario {
  /** Where the year sits in the spending distribution, for the notes. */
  readonly percentile: string;
  readonly pcpVisits: number;
  /** Allowed amount of one primary-care visit. */
  readonly pcpVisitCost: number;
  /** Everything else subject to the deductible: tests, imaging, prescriptions, specialist, ER, inpatient. */
  readonly otherCare: number;
}

/**
 * The modeled years of care [M]. Totals: low $600, medium $2,500, high $25,000 of allowed charges.
 * A primary-care visit at $150 allowed is in the range of commercial allowed amounts for an
 * established-patient office visit. High is a year with a hospital stay, enough to reach the MOOP
 * of most plans, which is what the top decile of the OOPC model does too.
 */
export const HEURISTIC_SCENARIOS: Readonly<Record<HeuristicLevel, UtilizationScenario>> = {
  low: { percentile: 'about the 30th percentile', pcpVisits: 2, pcpVisitCost: 150, otherCare: 300 },
  medium: { percentile: 'about the 55th percentile', pcpVisits: 3, pcpVisitCost: 150, otherCare: 2_050 },
  high: { percentile: 'about the 90th–95th percentile', pcpVisits: 6, pcpVisitCost: 150, otherCare: 24_100 },
};

/** Primary-care copay assumed when the plan charges copays before the deductible (PUF has no amount). */
export const ASSUMED_PCP_COPAY = 30;
/** Coinsurance assumed when the plan reports none (the most common plan-level rate). */
export const DEFAULT_COINSURANCE = 0.2;

/** Total allowed cost of the SBC examples under the template in force since 2021 (domain.md §9.3). */
const SBC_EXAMPLES = {
  having_baby: { title: 'Having a Baby', total: 12_700 },
  having_diabetes: { title: 'Managing Type 2 Diabetes', total: 5_600 },
} as const;

const toCents = (dollars: number): number => Math.round(dollars * 100);
const toDollars = (c: number): number => c / 100;

const USD0 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
const USD2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2 });
/** "$1,500" for whole dollars, "$1,500.50" otherwise. */
function money(c: number): string {
  return c % 100 === 0 ? USD0.format(c / 100) : USD2.format(c / 100);
}

export interface CostSharingInput {
  /** Individual deductible, dollars. */
  readonly deductible: number;
  /** Coinsurance after the deductible, fraction (0.2 = 20 %). */
  readonly coinsurance: number;
  /** Individual out-of-pocket maximum, dollars. */
  readonly moop: number;
  /** Copays paid before the deductible (not counted toward it), dollars. */
  readonly copaysBeforeDeductible: number;
  /** Allowed spending subject to the deductible, dollars. */
  readonly spendSubjectToDeductible: number;
}

export interface CostSharingResult {
  readonly copayCents: number;
  readonly deductibleCents: number;
  readonly coinsuranceCents: number;
  readonly totalCents: number;
  /** The MOOP cut the total. */
  readonly capped: boolean;
  /** Before the cap, for the notes. */
  readonly uncappedCents: number;
}

/**
 * The closed form of domain.md §10.2 in cents:
 * min(MOOP, copays + min(D, S) + c × max(0, S − D)).
 *
 * When the MOOP binds, the cut comes off the parts paid last in the year: coinsurance first, then the
 * deductible, then copays, so each part stays what the member would have paid by the time the
 * maximum is reached.
 */
export function costSharing(input: CostSharingInput): CostSharingResult {
  const d = Math.max(0, toCents(input.deductible));
  const s = Math.max(0, toCents(input.spendSubjectToDeductible));
  const moop = Math.max(0, toCents(input.moop));
  const copays = Math.max(0, toCents(input.copaysBeforeDeductible));
  const deductible = Math.min(d, s);
  const coinsurance = Math.round(Math.max(0, input.coinsurance) * Math.max(0, s - d));
  const uncapped = copays + deductible + coinsurance;
  const copayCents = Math.min(copays, moop);
  const deductibleCents = Math.min(deductible, moop - copayCents);
  const coinsuranceCents = Math.min(coinsurance, moop - copayCents - deductibleCents);
  return {
    copayCents,
    deductibleCents,
    coinsuranceCents,
    totalCents: copayCents + deductibleCents + coinsuranceCents,
    capped: uncapped > moop,
    uncappedCents: uncapped,
  };
}

interface PlanTerms {
  readonly deductible: number;
  readonly coinsurance: number;
  readonly moop: number;
  readonly notes: readonly string[];
}

function planTerms(plan: PlanVariantRecord, rules: Pick<TaxYearRules, 'tax_year' | 'moop_limit'>): PlanTerms {
  const notes: string[] = [];
  let deductible = plan.deductible.individual_tier1 ?? plan.deductible.combined_individual;
  if (deductible === null) {
    deductible = 0;
    notes.push('The plan reports no in-network deductible, so none is applied.');
  }
  let coinsurance = plan.coinsurance_tier1;
  if (coinsurance === null) {
    coinsurance = DEFAULT_COINSURANCE;
    notes.push(`The plan reports no coinsurance rate; ${DEFAULT_COINSURANCE * 100} % is assumed.`);
  }
  let moop = plan.max_out_of_pocket.individual_tier1 ?? plan.max_out_of_pocket.combined_individual;
  if (moop === null) {
    // The plan year's legal self-only limit (its rules table, domain.md §1.7): no plan may ask more.
    moop = rules.moop_limit.value.self_only;
    notes.push(
      `The plan reports no out-of-pocket maximum; the ${rules.tax_year} legal maximum of ${money(toCents(moop))} is used instead.`,
    );
  }
  return { deductible, coinsurance, moop, notes };
}

interface OutOfPocket {
  readonly deductibleCents: number;
  readonly copayCents: number;
  readonly coinsuranceCents: number;
  readonly limitsCents: number;
  readonly notes: readonly string[];
}

/** Heuristic OOP for a modeled year of care; `intro` says which year it is. */
function heuristic(
  plan: PlanVariantRecord,
  care: UtilizationScenario,
  intro: string,
  rules: Pick<TaxYearRules, 'tax_year' | 'moop_limit'>,
): OutOfPocket {
  const terms = planTerms(plan, rules);
  const visitCents = toCents(care.pcpVisitCost);
  const free = Math.min(care.pcpVisits, Math.max(0, plan.primary_care.cost_sharing_after_visits ?? 0));
  const copayVisits = Math.min(care.pcpVisits - free, Math.max(0, plan.primary_care.deductible_coinsurance_after_copays ?? 0));
  const restVisits = care.pcpVisits - free - copayVisits;
  // A copay larger than the visit's allowed amount would be capped at the allowed amount.
  const copayEach = Math.min(toCents(ASSUMED_PCP_COPAY), visitCents);
  const spendCents = restVisits * visitCents + toCents(care.otherCare);
  const r = costSharing({
    deductible: terms.deductible,
    coinsurance: terms.coinsurance,
    moop: terms.moop,
    copaysBeforeDeductible: toDollars(copayVisits * copayEach),
    spendSubjectToDeductible: toDollars(spendCents),
  });

  const notes: string[] = [intro, ...terms.notes];
  if (free > 0)
    notes.push(`The plan covers the first ${free === 1 ? 'primary-care visit' : `${free} primary-care visits`} with no cost sharing.`);
  if (copayVisits > 0) {
    notes.push(
      `${copayVisits === 1 ? '1 primary-care visit costs' : `${copayVisits} primary-care visits cost`} a copay before the deductible; the plan data give no amount, so ${money(copayEach)} each is assumed: ${money(copayVisits * copayEach)}.`,
    );
  }
  const dCents = toCents(terms.deductible);
  if (spendCents <= dCents) {
    notes.push(`The remaining ${money(spendCents)} of care falls within the ${money(dCents)} deductible, so you pay all of it.`);
  } else {
    const rest = spendCents - dCents;
    notes.push(
      `Of the remaining ${money(spendCents)} of care you pay the first ${money(dCents)} (the deductible), then ${round1(terms.coinsurance * 100)} % coinsurance on the other ${money(rest)}: ${money(Math.round(terms.coinsurance * rest))}.`,
    );
  }
  if (r.capped) {
    notes.push(`That adds up to ${money(r.uncappedCents)}, more than the out-of-pocket maximum, so you pay ${money(r.totalCents)}.`);
  }
  return { deductibleCents: r.deductibleCents, copayCents: r.copayCents, coinsuranceCents: r.coinsuranceCents, limitsCents: 0, notes };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function sbcAvailable(s: SbcScenario): boolean {
  return s.deductible !== null || s.copayment !== null || s.coinsurance !== null || s.limit !== null;
}

/**
 * Estimates the yearly cost of `plan` for one person: 12 months of `monthlyPremium` plus the
 * out-of-pocket share of the scenario's care.
 *
 * @param monthlyPremium age-rated monthly premium in dollars (before any credit)
 * @param rules the plan year's rules; only used for the legal MOOP when the plan reports none
 */
export function estimateOop(
  plan: PlanVariantRecord,
  monthlyPremium: number,
  scenario: OopScenario,
  rules: Pick<TaxYearRules, 'tax_year' | 'moop_limit'>,
): OopEstimate {
  if (!Number.isFinite(monthlyPremium) || monthlyPremium < 0) {
    // Premiums come from the build, which stores none below zero: reaching this is a caller's bug.
    throw new InvariantError(`monthlyPremium must be a non-negative number, got ${monthlyPremium}`);
  }
  let oop: OutOfPocket;
  let sbc = false;
  if (scenario === 'having_baby' || scenario === 'having_diabetes') {
    const example = SBC_EXAMPLES[scenario];
    const values = plan.sbc_scenarios[scenario];
    if (sbcAvailable(values)) {
      sbc = true;
      const part = (x: number | null): number => toCents(x ?? 0);
      const o = {
        deductibleCents: part(values.deductible),
        copayCents: part(values.copayment),
        coinsuranceCents: part(values.coinsurance),
        limitsCents: part(values.limit),
      };
      const total = o.deductibleCents + o.copayCents + o.coinsuranceCents + o.limitsCents;
      oop = {
        ...o,
        notes: [
          `Uses the plan's SBC coverage example '${example.title}' (in-network, self-only).`,
          `You pay ${money(o.deductibleCents)} deductible + ${money(o.copayCents)} copayments + ${money(o.coinsuranceCents)} coinsurance + ${money(o.limitsCents)} for limits or exclusions = ${money(total)}, out of a total example cost of about ${money(toCents(example.total))}.`,
        ],
      };
    } else {
      const care: UtilizationScenario = { percentile: '', pcpVisits: 0, pcpVisitCost: 0, otherCare: example.total };
      const h = heuristic(
        plan,
        care,
        `The plan has no SBC values for '${example.title}', so this is a modeled estimate: the example's total cost of about ${money(toCents(example.total))} run through the plan's deductible, coinsurance and out-of-pocket maximum.`,
        rules,
      );
      oop = h;
    }
  } else {
    const care = HEURISTIC_SCENARIOS[scenario];
    const total = toCents(care.pcpVisits * care.pcpVisitCost + care.otherCare);
    oop = heuristic(
      plan,
      care,
      `Modeled estimate, not plan data: a ${scenario}-use year of about ${money(total)} of in-network care (${care.pcpVisits} primary-care visits at ${money(toCents(care.pcpVisitCost))} and ${money(toCents(care.otherCare))} of other care such as tests, prescriptions and specialist or hospital care), ${care.percentile} of yearly health spending of privately insured people (a MEPS-calibrated assumption). Preventive care is free in network and left out.`,
      rules,
    );
  }

  const monthlyCents = toCents(monthlyPremium);
  const annualCents = 12 * monthlyCents;
  const oopCents = oop.deductibleCents + oop.copayCents + oop.coinsuranceCents + oop.limitsCents;
  const notes = [
    ...oop.notes,
    `Premium: 12 × ${money(monthlyCents)} = ${money(annualCents)} a year, before any premium tax credit; estimated total ${money(annualCents + oopCents)}.`,
  ];
  return {
    scenario,
    monthly_premium: toDollars(monthlyCents),
    estimated_annual_cost: toDollars(annualCents + oopCents),
    sbc_data_available: sbc,
    breakdown: {
      annual_premium: toDollars(annualCents),
      estimated_out_of_pocket: toDollars(oopCents),
      deductible_applied: toDollars(oop.deductibleCents),
      coinsurance_applied: toDollars(oop.coinsuranceCents),
      copay_applied: toDollars(oop.copayCents),
      limits_or_exclusions: toDollars(oop.limitsCents),
    },
    notes,
  };
}
