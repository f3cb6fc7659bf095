/**
 * @module Loader of the CMS Rate PUF (20 columns: one row per plan × rating area × age band).
 *
 * Both a real Rate PUF and the rows modeled from SLCSP benchmarks come through here, so a premium that
 * reaches the API has passed the same checks whatever its origin. Rates are kept in cents (exact) per
 * plan (standard component id, shared by all CSR variants) and rating area, one column per age band.
 * Rows for plans outside the build (dental, SHOP) and rate periods that do not cover January 1 are
 * counted as ignored; placeholder rates of 9,000 and above mark ages or plans not sold.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { TableReader } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { parseDate, parseDecimal } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';
import { AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';

/** Rate PUF placeholders (9999, 999999) mark ages or plans that are not sold. */
export const PLACEHOLDER_RATE = 9000;

/** Family-tier premiums of a community-rated state (NY/VT "Family Option" rows), dollars per month. */
export interface FamilyTierRates {
  readonly individual: number | null;
  readonly couple: number | null;
  readonly primarySubscriberAndOneDependent: number | null;
  readonly primarySubscriberAndTwoDependents: number | null;
  readonly primarySubscriberAndThreeOrMoreDependents: number | null;
  readonly coupleAndOneDependent: number | null;
  readonly coupleAndTwoDependents: number | null;
  readonly coupleAndThreeOrMoreDependents: number | null;
}

export interface RateTable {
  /** Standard component id → rating area → cents per age band (0 = not sold at that age). */
  readonly rates: Map<string, Map<number, Uint32Array>>;
  readonly familyTiers: Map<string, Map<number, FamilyTierRates>>;
  /** "MODELED" when every row came from the model, otherwise the PUF's SourceName values. */
  readonly sourceNames: Set<string>;
  readonly newestImport: string | null;
}

/** The official Rate PUF header (PY2026, 20 columns), in file order. */
export const RATE_PUF_HEADER = [
  'BusinessYear',
  'StateCode',
  'IssuerId',
  'SourceName',
  'ImportDate',
  'RateEffectiveDate',
  'RateExpirationDate',
  'PlanId',
  'RatingAreaId',
  'Tobacco',
  'Age',
  'IndividualRate',
  'IndividualTobaccoRate',
  'Couple',
  'PrimarySubscriberAndOneDependent',
  'PrimarySubscriberAndTwoDependents',
  'PrimarySubscriberAndThreeOrMoreDependents',
  'CoupleAndOneDependent',
  'CoupleAndTwoDependents',
  'CoupleAndThreeOrMoreDependents',
] as const;

const REQUIRED = ['BusinessYear', 'StateCode', 'PlanId', 'RatingAreaId', 'Age', 'IndividualRate'] as const;
/** Columns read when present; IssuerId is not needed (the plan id carries it). */
const OPTIONAL = RATE_PUF_HEADER.filter((c) => !(REQUIRED as readonly string[]).includes(c) && c !== 'IssuerId');

/** Age label → first and last band it covers. Older files and some states use a 0–20 child band. */
function bandsOfLabel(label: string): [number, number] | null {
  if (label === '0-14') return [0, 0];
  if (label === '0-20') return [0, 6];
  if (label === '64 and over') return [50, 50];
  if (/^\d{2}$/.test(label)) {
    const age = Number(label);
    if (age >= 15 && age <= 63) return [age - 14, age - 14];
    if (age === 64) return [50, 50];
  }
  return null;
}

/**
 * Loads rates for the plans in `plans` (standard component ids of the build).
 * @param coverageDate the date a rate period must cover, `YYYY-01-01` of the plan year
 */
export async function loadRates(
  table: TableReader,
  year: number,
  plans: ReadonlySet<string>,
  sink: DiagnosticSink,
  progress: ProgressSink,
  stage = 'rates',
): Promise<RateTable> {
  const rates = new Map<string, Map<number, Uint32Array>>();
  const familyTiers = new Map<string, Map<number, FamilyTierRates>>();
  const sourceNames = new Set<string>();
  let newestImport: string | null = null;
  const coverageDate = `${year}-01-01`;
  const file = table.file;
  let lastImportRaw = '';
  await forEachRow(table, { required: REQUIRED, optional: OPTIONAL, stage }, sink, progress, (row) => {
    const reject = (column: string, reason: string): void => sink.reject({ ...row.at(column), reason });
    if (row.get('BusinessYear') !== String(year)) return reject('BusinessYear', `BusinessYear is not the build year ${year}`);
    const planId = row.get('PlanId');
    if (!plans.has(planId)) {
      sink.rowIgnored(file);
      return;
    }
    const eff = row.get('RateEffectiveDate');
    const exp = row.get('RateExpirationDate');
    if (eff !== '' || exp !== '') {
      const e = eff === '' ? null : parseDate(eff);
      const x = exp === '' ? null : parseDate(exp);
      if ((e !== null && !e.ok) || (x !== null && !x.ok)) return reject('RateEffectiveDate', 'rate period dates are not dates');
      const from = e?.ok === true ? e.value : null;
      const to = x?.ok === true ? x.value : null;
      if ((from !== null && from > coverageDate) || (to !== null && to < coverageDate)) {
        sink.rowIgnored(file); // another rate period (quarterly SHOP rows)
        return;
      }
    }
    const areaMatch = /^Rating Area (\d{1,3})$/i.exec(row.get('RatingAreaId'));
    if (areaMatch === null) return reject('RatingAreaId', 'expected "Rating Area <n>"');
    const area = Number(areaMatch[1]);
    const source = row.get('SourceName');
    if (source !== '') sourceNames.add(source);
    const importRaw = row.get('ImportDate');
    if (importRaw !== '' && importRaw !== lastImportRaw) {
      lastImportRaw = importRaw;
      const d = parseDate(importRaw);
      if (d.ok && d.value !== null && (newestImport === null || d.value > newestImport)) newestImport = d.value;
    }
    const label = row.get('Age');
    if (label === 'Family Option') {
      const tier = (c: string): number | null => {
        const r = parseDecimal(row.get(c));
        return r.ok ? r.value : null;
      };
      let byArea = familyTiers.get(planId);
      if (byArea === undefined) familyTiers.set(planId, (byArea = new Map()));
      byArea.set(area, {
        individual: tier('IndividualRate'),
        couple: tier('Couple'),
        primarySubscriberAndOneDependent: tier('PrimarySubscriberAndOneDependent'),
        primarySubscriberAndTwoDependents: tier('PrimarySubscriberAndTwoDependents'),
        primarySubscriberAndThreeOrMoreDependents: tier('PrimarySubscriberAndThreeOrMoreDependents'),
        coupleAndOneDependent: tier('CoupleAndOneDependent'),
        coupleAndTwoDependents: tier('CoupleAndTwoDependents'),
        coupleAndThreeOrMoreDependents: tier('CoupleAndThreeOrMoreDependents'),
      });
      return;
    }
    if (label === '65 and over') {
      sink.rowIgnored(file); // priced as 64 and over
      return;
    }
    const bands = bandsOfLabel(label);
    if (bands === null) return reject('Age', 'expected 0-14, 0-20, 15 … 63, 64 and over or Family Option');
    const rate = parseDecimal(row.get('IndividualRate'));
    if (!rate.ok || rate.value === null || rate.value < 0) return reject('IndividualRate', 'not a non-negative amount');
    if (rate.value >= PLACEHOLDER_RATE) {
      sink.rowIgnored(file);
      return;
    }
    let byArea = rates.get(planId);
    if (byArea === undefined) rates.set(planId, (byArea = new Map()));
    let cents = byArea.get(area);
    if (cents === undefined) byArea.set(area, (cents = new Uint32Array(AGE_BAND_COUNT)));
    const value = Math.round(rate.value * 100);
    for (let b = bands[0]; b <= bands[1]; b++) {
      // The specific one-year band wins over a broad 0-20 band whatever the row order.
      if (cents[b] !== 0 && bands[0] !== bands[1]) continue;
      cents[b] = value;
    }
  });
  sink.checkRejectedShare(file);
  communityRates(rates, familyTiers);
  return { rates, familyTiers, sourceNames, newestImport };
}

/**
 * A plan priced only by `Family Option` rows (Vermont's SBE file has no age rows at all) is community
 * rated: one rate for every age, the single-subscriber `IndividualRate`. Its age bands are filled with
 * it, so search, compare and the SLCSP read it like any other plan; age rows, where a file has them,
 * are never overwritten.
 */
function communityRates(rates: RateTable['rates'], familyTiers: RateTable['familyTiers']): void {
  for (const [planId, byArea] of familyTiers) {
    for (const [area, tiers] of byArea) {
      if (rates.get(planId)?.has(area) === true) continue;
      if (tiers.individual === null || tiers.individual < 0 || tiers.individual >= PLACEHOLDER_RATE) continue;
      let planRates = rates.get(planId);
      if (planRates === undefined) rates.set(planId, (planRates = new Map()));
      planRates.set(area, new Uint32Array(AGE_BAND_COUNT).fill(Math.round(tiers.individual * 100)));
    }
  }
}
