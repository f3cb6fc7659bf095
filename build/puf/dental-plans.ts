/**
 * @module The stand-alone dental rows of a Plans PUF: individual market,
 * `DentalOnlyPlan` = Yes. They are read in the Plan Attributes pass (plan-attributes.ts), not in a
 * second pass over a 35 MB file, and checked like medical rows: a row without a usable identity is
 * rejected with its file, line, column and reason; an unreadable optional value is nulled with a warning.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { Row } from '../read/table-rows.ts';
import { parseMoney, parsePercent, type ParseResult } from '../read/values.ts';
import { DENTAL_METAL_LEVELS, type DentalEnrollees, type DentalPlanRecord } from '../../src/engine/dental-record.ts';
import { planRowIdentity, rejectRow } from './plan-row-identity.ts';
import { documentUrl } from './document-url.ts';
import { optionalCell } from '../read/optional-cell.ts';

/** Columns only dental rows need, read when the file has them. */
export const DENTAL_OPTIONAL_COLUMNS = ['EHBPediatricDentalApportionmentQuantity'] as const;

/** True for a row of the individual dental market. */
export function isDentalRow(row: Row): boolean {
  return row.get('MarketCoverage') === 'Individual' && row.get('DentalOnlyPlan').toLowerCase() === 'yes';
}

const ENROLLEES: Readonly<Record<string, DentalEnrollees>> = {
  'allows adult and child-only': 'adult_and_child',
  'allows child-only': 'child_only',
  'allows adult-only': 'adult_only',
};

/** The record of a dental row of `year`, or null when the row is rejected (the reason is in `sink`). */
export function readDentalRow(row: Row, year: number, seen: ReadonlyMap<string, unknown>, sink: DiagnosticSink): DentalPlanRecord | null {
  if (row.get('BusinessYear') !== String(year)) return rejectRow(row, sink, 'BusinessYear', `BusinessYear is not the build year ${year}`);
  const identity = planRowIdentity(row, seen, sink, DENTAL_METAL_LEVELS, 'dental');
  if (identity === null) return null;
  const { id, scid, state, metal, planType, issuerId } = identity;
  const optional = <T>(column: string, parse: (raw: string) => ParseResult<T>): T | null => optionalCell(row, sink, parse)(column);
  return {
    id,
    standard_component_id: scid,
    name: row.get('PlanMarketingName'),
    issuer_id: issuerId,
    issuer: row.get('IssuerMarketPlaceMarketingName').replace(/\s+/g, ' '),
    state,
    plan_type: planType,
    metal_level: metal,
    enrollees: ENROLLEES[row.get('ChildOnlyOffering').toLowerCase()] ?? null,
    // -00 is the off-exchange variant, as CSRVariationType says ("… Off Exchange Plan").
    on_exchange: identity.variant !== '00',
    csr_variation: row.get('CSRVariationType'),
    service_area_id: row.get('ServiceAreaId'),
    // "1.0" in the federal file, "100.00%" in the SBE files: parsePercent reads both as a fraction.
    ehb_pediatric_dental_apportionment: optional('EHBPediatricDentalApportionmentQuantity', parsePercent),
    // Dental rows leave the TEHB and DEHB columns blank and state their cost sharing in MEHB.
    deductible_individual: optional('MEHBDedInnTier1Individual', parseMoney),
    max_out_of_pocket_individual: optional('MEHBInnTier1IndividualMOOP', parseMoney),
    links: { benefits_summary: documentUrl(row, 'URLForSummaryofBenefitsCoverage'), brochure: documentUrl(row, 'PlanBrochure') },
  };
}
