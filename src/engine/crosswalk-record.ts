/**
 * @module Crosswalk rows as stored per source plan (LMDB `crosswalk`, key = 14-character plan id).
 * Raw CMS codes are kept: their official meanings for PY2026 are unconfirmed (domain.md §7.2), so the
 * API maps them to its labels and still returns the code.
 */

export interface CrosswalkRow {
  readonly state: string;
  readonly dental: boolean;
  readonly source_plan_id: string;
  readonly source_issuer_id: string | null;
  readonly source_metal_level: string | null;
  readonly county_fips: string;
  /** `00000` = the whole county. */
  readonly zip: string;
  readonly crosswalk_level: number;
  readonly reason_code: number;
  /** null for the sentinel `00000XX0000000` (discontinued, no automatic re-enrollment). */
  readonly target_plan_id: string | null;
  readonly target_issuer_id: string | null;
  readonly target_metal_level: string | null;
  readonly age_off_plan_id: string | null;
}

export interface CrosswalkPlanEntry {
  readonly source_year: number;
  readonly target_year: number;
  readonly rows: readonly CrosswalkRow[];
}

export const DISCONTINUED_PLAN_ID = '00000XX0000000';
