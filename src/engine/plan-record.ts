/**
 * @module The plan detail record stored per plan variant in a build (LMDB `plans`, msgpack).
 *
 * One record per `PlanId` (standard component ID + `-NN` variant) of the individual medical market.
 * Money is in dollars, `null` where the PUF says "Not Applicable" or leaves the cell blank; nothing here
 * is ever NaN. Field names are the API's (snake_case) so detail responses need no renaming.
 */

export const METAL_LEVELS = ['bronze', 'expanded bronze', 'silver', 'gold', 'platinum', 'catastrophic'] as const;
export type MetalLevel = (typeof METAL_LEVELS)[number];

export const PLAN_TYPES = ['hmo', 'ppo', 'epo', 'pos', 'indemnity'] as const;
export type PlanType = (typeof PLAN_TYPES)[number];

/**
 * The values a `metal_level` filter accepts (REST and MCP alike): the metal levels, plus
 * `expanded_bronze`, the spelling without a space that query strings and tool arguments favour.
 */
export const METAL_LEVEL_FILTER_VALUES = [
  'bronze',
  'expanded_bronze',
  'expanded bronze',
  'silver',
  'gold',
  'platinum',
  'catastrophic',
] as const;

/** Deductibles by network tier; family amounts are the per-group (aggregate) values. */
export interface DeductibleSet {
  readonly individual_tier1: number | null;
  readonly individual_tier2: number | null;
  readonly family_tier1: number | null;
  readonly family_tier2: number | null;
  readonly individual_oon: number | null;
  readonly family_oon: number | null;
  readonly combined_individual: number | null;
  readonly combined_family: number | null;
  /** Embedded per-person deductible inside a family policy, tier 1. */
  readonly family_per_person_tier1: number | null;
}

export type MoopSet = DeductibleSet;

export interface SbcScenario {
  readonly deductible: number | null;
  readonly copayment: number | null;
  readonly coinsurance: number | null;
  readonly limit: number | null;
  /** Sum of the four members; null when all four are null. */
  readonly total: number | null;
}

export interface PlanLinks {
  readonly benefits_summary: string | null;
  readonly brochure: string | null;
  readonly formulary: string | null;
  readonly provider_directory: string | null;
}

export interface PlanVariantRecord {
  readonly id: string;
  readonly standard_component_id: string;
  /** Two-digit variant suffix: 00 off exchange, 01 on exchange standard, 02/03 AI/AN, 04/05/06 silver CSR. */
  readonly variant: string;
  readonly name: string;
  readonly variant_name: string | null;
  readonly issuer_id: string;
  readonly issuer: string;
  readonly state: string;
  readonly metal_level: MetalLevel;
  readonly plan_type: PlanType;
  readonly service_area_id: string;
  readonly network_id: string | null;
  readonly formulary_id: string | null;
  readonly product_id: string | null;
  readonly csr_variation: string;
  readonly hsa_eligible: boolean;
  readonly national_network: boolean;
  /** "Allows Child-Only" plans cannot be an adult's benchmark. */
  readonly child_only: boolean;
  readonly on_exchange: boolean;
  readonly is_new_plan: boolean | null;
  readonly design_type: string | null;
  readonly referral_required_for_specialist: boolean;
  readonly out_of_country_coverage: boolean;
  readonly out_of_service_area_coverage: boolean;
  /** Share of the premium that pays for essential health benefits (APTC pays only that part). */
  readonly ehb_percent_premium: number | null;
  readonly medical_drug_deductibles_integrated: boolean;
  readonly medical_drug_moop_integrated: boolean;
  /** TEHB (integrated) or MEHB (medical) values; see docs/compatibility.md#plan-detail. */
  readonly deductible: DeductibleSet;
  /** Drug deductibles (DEHB) when medical and drug deductibles are separate, else null. */
  readonly drug_deductible: DeductibleSet | null;
  readonly max_out_of_pocket: MoopSet;
  /** In-network tier-1 coinsurance after the deductible, as a fraction (0.2 = 20 %). */
  readonly coinsurance_tier1: number | null;
  readonly primary_care: {
    readonly cost_sharing_after_visits: number | null;
    readonly deductible_coinsurance_after_copays: number | null;
  };
  readonly sbc_scenarios: {
    readonly having_baby: SbcScenario;
    readonly having_diabetes: SbcScenario;
    readonly simple_fracture: SbcScenario;
  };
  readonly links: PlanLinks;
  readonly source_name: string | null;
  readonly import_date: string | null;
}

/** A 14-character standard component ID: issuer (5 digits), state (2 letters), product and plan (7 digits). */
const ISSUER = '\\d{5}';
const STATE = '[A-Z]{2}';
const PRODUCT_AND_PLAN = '\\d{7}';
const SCID = `${ISSUER}${STATE}${PRODUCT_AND_PLAN}`;
/** JSON Schema pattern of a standard component ID. */
export const STANDARD_COMPONENT_ID_PATTERN = `^${SCID}$`;
/** JSON Schema pattern of a plan ID as the API takes it: a variant ID, or a bare standard component ID. */
export const PLAN_ID_PATTERN = `^${SCID}(-\\d{2})?$`;
export const PLAN_VARIANT_ID = new RegExp(`^(${SCID})-(\\d{2})$`);
export const STANDARD_COMPONENT_ID = new RegExp(STANDARD_COMPONENT_ID_PATTERN);
/** A plan ID of either shape; group 1 is its state. */
const PLAN_ID = new RegExp(`^${ISSUER}(${STATE})${PRODUCT_AND_PLAN}(?:-\\d{2})?$`);

/** The variant a bare standard component ID means: its on-exchange standard plan. */
export const DEFAULT_VARIANT = '01';

/** The variant ID a plan ID names: itself, or a bare standard component ID's {@link DEFAULT_VARIANT}. */
export function variantIdOf(planId: string): string {
  return STANDARD_COMPONENT_ID.test(planId) ? `${planId}-${DEFAULT_VARIANT}` : planId;
}

/** The state letters of a plan ID of either shape; undefined for any other text. */
export function stateOfPlanId(planId: string): string | undefined {
  return PLAN_ID.exec(planId)?.[1];
}
