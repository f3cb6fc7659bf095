/**
 * @module Loader of the CMS Benefits and Cost Sharing PUF (24 columns, one row per variant × benefit).
 *
 * The file is ~375 MB; only the in-network tier-1 cost sharing of the services the OOP estimate models
 * is kept, parsed into numbers, so the build stays small and the estimate needs no string parsing.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { TableReader } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { parsePercent } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';

/** Services of the OOP model → CMS `BenefitName`. */
export const OOP_BENEFITS = {
  primary_care: 'Primary Care Visit to Treat an Injury or Illness',
  specialist: 'Specialist Visit',
  preventive: 'Preventive Care/Screening/Immunization',
  generic_drugs: 'Generic Drugs',
  preferred_brand_drugs: 'Preferred Brand Drugs',
  non_preferred_brand_drugs: 'Non-Preferred Brand Drugs',
  specialty_drugs: 'Specialty Drugs',
  emergency_room: 'Emergency Room Services',
  urgent_care: 'Urgent Care Centers or Facilities',
  inpatient: 'Inpatient Hospital Services (e.g., Hospital Stay)',
  laboratory: 'Laboratory Outpatient and Professional Services',
  x_ray: 'X-rays and Diagnostic Imaging',
  imaging: 'Imaging (CT/PET Scans, MRIs)',
} as const;
export type OopService = keyof typeof OOP_BENEFITS;

export interface CostSharing {
  readonly covered: boolean;
  /** Copay in dollars, null when none. */
  readonly copay: number | null;
  /** Coinsurance as a fraction, null when none. */
  readonly coinsurance: number | null;
  /** The copay/coinsurance applies only after the deductible is met. */
  readonly after_deductible: boolean;
  readonly no_charge: boolean;
}

export type BenefitsByVariant = Map<string, Partial<Record<OopService, CostSharing>>>;

const SERVICE_BY_NAME = new Map<string, OopService>(Object.entries(OOP_BENEFITS).map(([k, v]) => [v.toLowerCase(), k as OopService]));

/** Parses the copay and coinsurance strings of one benefit ("$30 Copay after deductible", "20.00% Coinsurance after deductible", "No Charge"). */
export function parseCostSharing(copayRaw: string, coinsRaw: string, coveredRaw: string): CostSharing {
  const covered = coveredRaw === '' || /^covered$/i.test(coveredRaw);
  const copayMatch = /\$\s*([\d,]+(?:\.\d+)?)/.exec(copayRaw);
  const coinsMatch = /[\d.]+\s*%/.exec(coinsRaw);
  const copay = copayMatch === null ? null : Number(copayMatch[1]!.replaceAll(',', ''));
  const coinsParsed = coinsMatch === null ? null : parsePercent(coinsMatch[0].replace(/\s+/g, ''));
  const coins = coinsParsed?.ok ? coinsParsed.value : null;
  const noCharge = /^no charge/i.test(copayRaw) && (coinsRaw === '' || /^no charge|^not applicable/i.test(coinsRaw));
  return {
    covered,
    copay: copay !== null && Number.isFinite(copay) ? copay : null,
    coinsurance: coins !== null && Number.isFinite(coins) ? coins : null,
    after_deductible: /after deductible/i.test(copayRaw) || /after deductible/i.test(coinsRaw),
    no_charge: noCharge,
  };
}

export async function loadBenefits(
  table: TableReader,
  year: number,
  variants: ReadonlySet<string>,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<BenefitsByVariant> {
  const file = table.file;
  const out: BenefitsByVariant = new Map();
  await forEachRow(
    table,
    { required: ['BusinessYear', 'PlanId', 'BenefitName'], optional: ['CopayInnTier1', 'CoinsInnTier1', 'IsCovered'], stage: 'benefits' },
    sink,
    progress,
    (row) => {
      if (row.get('BusinessYear') !== String(year)) {
        sink.reject({
          ...row.at('BusinessYear'),
          reason: `BusinessYear is not the build year ${year}`,
        });
        return;
      }
      const id = row.get('PlanId');
      const service = SERVICE_BY_NAME.get(row.get('BenefitName').toLowerCase());
      if (service === undefined || !variants.has(id)) {
        sink.rowIgnored(file);
        return;
      }
      let entry = out.get(id);
      if (entry === undefined) out.set(id, (entry = {}));
      entry[service] = parseCostSharing(row.get('CopayInnTier1'), row.get('CoinsInnTier1'), row.get('IsCovered'));
    },
  );
  sink.checkRejectedShare(file);
  return out;
}
