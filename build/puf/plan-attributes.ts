/**
 * @module Loader of the CMS Plan Attributes PUF (151 columns, one row per plan variant).
 *
 * Keeps the individual medical market (the marketplace product) and, apart, the individual stand-alone
 * dental plans (dental-plans.ts); SHOP rows are counted as ignored. Columns are found by header name, so extra or reordered columns of other years
 * load unchanged. A row without a usable identity (plan id, state, metal level, plan type) is
 * rejected; an unparsable money or flag value becomes null with a warning and the row is kept.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { TableReader } from '../read/table.ts';
import { forEachRow, type Row } from '../read/table-rows.ts';
import { parseDate, parseDecimal, parseInteger, parseMoney, parsePercent, parseYesNo, type ParseResult } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';
import type { DentalPlanRecord } from '../../src/engine/dental-record.ts';
import { DENTAL_OPTIONAL_COLUMNS, isDentalRow, readDentalRow } from './dental-plans.ts';
import { documentUrl } from './document-url.ts';
import { optionalCell } from '../read/optional-cell.ts';
import { planRowIdentity, rejectRow, type PlanRowIdentity } from './plan-row-identity.ts';
import {
  METAL_LEVELS,
  type DeductibleSet,
  type MetalLevel,
  type PlanVariantRecord,
  type SbcScenario,
} from '../../src/engine/plan-record.ts';

const REQUIRED = [
  'BusinessYear',
  'StateCode',
  'IssuerId',
  'IssuerMarketPlaceMarketingName',
  'MarketCoverage',
  'DentalOnlyPlan',
  'StandardComponentId',
  'PlanMarketingName',
  'ServiceAreaId',
  'PlanType',
  'MetalLevel',
  'PlanId',
  'CSRVariationType',
] as const;

const TIERS = ['InnTier1', 'InnTier2', 'OutOfNet', 'CombInnOon'] as const;

function moneyColumns(prefix: string, kind: 'Ded' | 'MOOP'): string[] {
  const out: string[] = [];
  for (const t of TIERS) {
    for (const who of ['Individual', 'FamilyPerPerson', 'FamilyPerGroup']) {
      out.push(kind === 'Ded' ? `${prefix}Ded${t}${who}` : `${prefix}${t}${who}MOOP`);
    }
  }
  return out;
}

const SBC = ['HavingaBaby', 'HavingDiabetes', 'HavingSimplefracture'] as const;

const OPTIONAL = [
  'SourceName',
  'ImportDate',
  'HIOSProductId',
  'NetworkId',
  'FormularyId',
  'IsNewPlan',
  'DesignType',
  'ChildOnlyOffering',
  'IsReferralRequiredForSpecialist',
  'EHBPercentTotalPremium',
  'OutOfCountryCoverage',
  'OutOfServiceAreaCoverage',
  'NationalNetwork',
  'FormularyURL',
  'PlanVariantMarketingName',
  'MedicalDrugDeductiblesIntegrated',
  'MedicalDrugMaximumOutofPocketIntegrated',
  'BeginPrimaryCareCostSharingAfterNumberOfVisits',
  'BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays',
  'IsHSAEligible',
  'URLForSummaryofBenefitsCoverage',
  'PlanBrochure',
  'TEHBDedInnTier1Coinsurance',
  'MEHBDedInnTier1Coinsurance',
  ...moneyColumns('TEHB', 'Ded'),
  ...moneyColumns('MEHB', 'Ded'),
  ...moneyColumns('DEHB', 'Ded'),
  ...moneyColumns('TEHB', 'MOOP'),
  ...moneyColumns('MEHB', 'MOOP'),
  ...SBC.flatMap((s) => ['Deductible', 'Copayment', 'Coinsurance', 'Limit'].map((k) => `SBC${s}${k}`)),
  ...DENTAL_OPTIONAL_COLUMNS,
];

export interface PlanAttributesResult {
  /** Individual medical plan variants by PlanId. */
  readonly variants: Map<string, PlanVariantRecord>;
  /** Individual stand-alone dental plan variants by PlanId (dental-plans.ts). */
  readonly dental: Map<string, DentalPlanRecord>;
  /** Newest ImportDate seen (YYYY-MM-DD), the freshness of the data. */
  readonly newestImport: string | null;
}

/** Loads the individual medical plan variants of `year`, and the individual dental ones apart. */
export async function loadPlanAttributes(
  table: TableReader,
  year: number,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<PlanAttributesResult> {
  const variants = new Map<string, PlanVariantRecord>();
  const dental = new Map<string, DentalPlanRecord>();
  let newestImport: string | null = null;
  const file = table.file;
  await forEachRow(table, { required: REQUIRED, optional: OPTIONAL, stage: 'plan attributes' }, sink, progress, (row) => {
    if (isDentalRow(row)) {
      const d = readDentalRow(row, year, dental, sink);
      if (d !== null) dental.set(d.id, d);
      return;
    }
    const identity = rowIdentity(row, year, variants, file, sink);
    if (identity === null) return;
    const record = readVariant(row, identity, cellReaders(row, sink));
    const importDate = record.import_date;
    if (importDate !== null && (newestImport === null || importDate > newestImport)) newestImport = importDate;
    variants.set(identity.id, record);
  });
  sink.checkRejectedShare(file);
  return { variants, dental, newestImport };
}

/** The identity of a medical variant. */
type VariantIdentity = PlanRowIdentity<MetalLevel>;

/** The identity of an individual medical row of `year`; null when the row is ignored or rejected. */
function rowIdentity(
  row: Row,
  year: number,
  seen: ReadonlyMap<string, unknown>,
  file: string,
  sink: DiagnosticSink,
): VariantIdentity | null {
  if (row.get('BusinessYear') !== String(year)) return rejectRow(row, sink, 'BusinessYear', `BusinessYear is not the build year ${year}`);
  if (row.get('MarketCoverage') !== 'Individual' || row.get('DentalOnlyPlan').toLowerCase() !== 'no') {
    sink.rowIgnored(file);
    return null;
  }
  return planRowIdentity(row, seen, sink, METAL_LEVELS, 'medical');
}

/** Typed readers of one row's optional cells; empty reads as null. */
interface CellReaders {
  readonly money: (column: string) => number | null;
  readonly flag: (column: string) => boolean | null;
  readonly pct: (column: string) => number | null;
  readonly int: (column: string) => number | null;
  readonly dec: (column: string) => number | null;
  readonly text: (column: string) => string | null;
}

function cellReaders(row: Row, sink: DiagnosticSink): CellReaders {
  // An unparsable optional value is nulled with a warning; the row is kept.
  const optional = <T>(parse: (raw: string) => ParseResult<T>) => optionalCell(row, sink, parse);
  return {
    money: optional(parseMoney),
    flag: optional(parseYesNo),
    pct: optional(parsePercent),
    int: optional(parseInteger),
    dec: optional(parseDecimal),
    text: (column: string): string | null => {
      const v = row.get(column);
      return v === '' ? null : v;
    },
  };
}

/**
 * The record of one identified row. The readers warn in the order they are called, which is the order
 * of the kept diagnostics in the manifest: keep the field order.
 */
function readVariant(row: Row, idn: VariantIdentity, cells: CellReaders): PlanVariantRecord {
  const { money, flag, pct, int, dec, text } = cells;
  const dedIntegrated = flag('MedicalDrugDeductiblesIntegrated') ?? true;
  const moopIntegrated = flag('MedicalDrugMaximumOutofPocketIntegrated') ?? true;
  const dedPrefix = dedIntegrated ? 'TEHB' : 'MEHB';
  const moopPrefix = moopIntegrated ? 'TEHB' : 'MEHB';
  const rawImport = row.get('ImportDate');
  const parsedImport = rawImport === '' ? null : parseDate(rawImport);
  return {
    id: idn.id,
    standard_component_id: idn.scid,
    variant: idn.variant,
    name: row.get('PlanMarketingName'),
    variant_name: text('PlanVariantMarketingName'),
    issuer_id: idn.issuerId,
    issuer: row.get('IssuerMarketPlaceMarketingName').replace(/\s+/g, ' '),
    state: idn.state,
    metal_level: idn.metal,
    plan_type: idn.planType,
    service_area_id: row.get('ServiceAreaId'),
    network_id: text('NetworkId'),
    formulary_id: text('FormularyId'),
    product_id: text('HIOSProductId'),
    csr_variation: row.get('CSRVariationType'),
    hsa_eligible: flag('IsHSAEligible') ?? false,
    national_network: flag('NationalNetwork') ?? false,
    child_only: row.get('ChildOnlyOffering') === 'Allows Child-Only',
    on_exchange: idn.variant !== '00',
    is_new_plan: row.get('IsNewPlan') === '' ? null : row.get('IsNewPlan') === 'New',
    design_type: text('DesignType'),
    referral_required_for_specialist: flag('IsReferralRequiredForSpecialist') ?? false,
    out_of_country_coverage: flag('OutOfCountryCoverage') ?? false,
    out_of_service_area_coverage: flag('OutOfServiceAreaCoverage') ?? false,
    ehb_percent_premium: dec('EHBPercentTotalPremium'),
    medical_drug_deductibles_integrated: dedIntegrated,
    medical_drug_moop_integrated: moopIntegrated,
    deductible: tierSet(money, dedPrefix, 'Ded'),
    drug_deductible: dedIntegrated ? null : tierSet(money, 'DEHB', 'Ded'),
    max_out_of_pocket: tierSet(money, moopPrefix, 'MOOP'),
    coinsurance_tier1: pct(`${dedPrefix}DedInnTier1Coinsurance`),
    primary_care: {
      cost_sharing_after_visits: int('BeginPrimaryCareCostSharingAfterNumberOfVisits'),
      deductible_coinsurance_after_copays: int('BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays'),
    },
    sbc_scenarios: {
      having_baby: sbc(money, 'HavingaBaby'),
      having_diabetes: sbc(money, 'HavingDiabetes'),
      simple_fracture: sbc(money, 'HavingSimplefracture'),
    },
    links: {
      benefits_summary: documentUrl(row, 'URLForSummaryofBenefitsCoverage'),
      brochure: documentUrl(row, 'PlanBrochure'),
      formulary: documentUrl(row, 'FormularyURL'),
      // The Plan Attributes PUF has no provider directory; the Network PUF's NetworkURL would supply it.
      provider_directory: null,
    },
    source_name: text('SourceName'),
    import_date: parsedImport?.ok === true ? parsedImport.value : null,
  };
}

function tierSet(money: (c: string) => number | null, prefix: string, kind: 'Ded' | 'MOOP'): DeductibleSet {
  const col = (tier: string, who: string): string => (kind === 'Ded' ? `${prefix}Ded${tier}${who}` : `${prefix}${tier}${who}MOOP`);
  return {
    individual_tier1: money(col('InnTier1', 'Individual')),
    individual_tier2: money(col('InnTier2', 'Individual')),
    family_tier1: money(col('InnTier1', 'FamilyPerGroup')),
    family_tier2: money(col('InnTier2', 'FamilyPerGroup')),
    individual_oon: money(col('OutOfNet', 'Individual')),
    family_oon: money(col('OutOfNet', 'FamilyPerGroup')),
    combined_individual: money(col('CombInnOon', 'Individual')),
    combined_family: money(col('CombInnOon', 'FamilyPerGroup')),
    family_per_person_tier1: money(col('InnTier1', 'FamilyPerPerson')),
  };
}

function sbc(money: (c: string) => number | null, scenario: string): SbcScenario {
  const deductible = money(`SBC${scenario}Deductible`);
  const copayment = money(`SBC${scenario}Copayment`);
  const coinsurance = money(`SBC${scenario}Coinsurance`);
  const limit = money(`SBC${scenario}Limit`);
  const parts = [deductible, copayment, coinsurance, limit].filter((v): v is number => v !== null);
  return {
    deductible,
    copayment,
    coinsurance,
    limit,
    total: parts.length === 0 ? null : Math.round(parts.reduce((a, b) => a + b, 0) * 100) / 100,
  };
}
