/**
 * @module The stand-alone dental plan records of a build, kept apart from the medical
 * plans: their own LMDB databases (build-format.ts `DB.dental*`), never the columnar tables, so a
 * medical search reads exactly what it read before dental plans were compiled.
 *
 * One record per individual-market dental plan variant (`DentalOnlyPlan` = Yes): `-00` off exchange,
 * `-01` on exchange. Money is in dollars, null where the PUF says "Not Applicable" or leaves it blank.
 */
import type { PlanType } from './plan-record.ts';

/** Dental plans' actuarial tiers as the PUF writes them (`MetalLevel` High / Low). */
export const DENTAL_METAL_LEVELS = ['high', 'low'] as const;
export type DentalMetalLevel = (typeof DENTAL_METAL_LEVELS)[number];

/** Who may enrol, from `ChildOnlyOffering`. */
export const DENTAL_ENROLLEES = ['adult_and_child', 'child_only', 'adult_only'] as const;
export type DentalEnrollees = (typeof DENTAL_ENROLLEES)[number];

export interface DentalPlanRecord {
  readonly id: string;
  readonly standard_component_id: string;
  readonly name: string;
  readonly issuer_id: string;
  readonly issuer: string;
  readonly state: string;
  readonly plan_type: PlanType;
  readonly metal_level: DentalMetalLevel;
  /** Null when `ChildOnlyOffering` is blank or not one of the three CMS values. */
  readonly enrollees: DentalEnrollees | null;
  readonly on_exchange: boolean;
  readonly csr_variation: string;
  readonly service_area_id: string;
  /** `EHBPediatricDentalApportionmentQuantity` as a fraction (1 = the whole premium is pediatric EHB). */
  readonly ehb_pediatric_dental_apportionment: number | null;
  /** In-network tier-1 individual amounts: dental rows carry them in the MEHB columns. */
  readonly deductible_individual: number | null;
  readonly max_out_of_pocket_individual: number | null;
  readonly links: { readonly benefits_summary: string | null; readonly brochure: string | null };
}

/** One dental plan variant offered in a county: everywhere in it (zips null) or in the listed ZIPs. */
export interface DentalOffer {
  readonly id: string;
  readonly zips: readonly string[] | null;
}

/** Whether a state's dental premiums come from a Rate PUF (`DB.dentalStates`). */
export interface DentalStateRecord {
  readonly rates_loaded: boolean;
}

/** A dental plan's rates in one rating area: cents per age band (0 = not sold at that age). */
export type DentalAreaRates = readonly [area: number, cents: readonly number[]];
