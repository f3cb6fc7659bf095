/**
 * @module Loader of the CMS Plan ID Crosswalk PUF (24 columns in the PY2025→PY2026 edition).
 *
 * The year suffixes of the columns (`PlanID_2025`, `PlanID_2026`) change with every edition, so the
 * year pair is read from the header rather than assumed; the source year must be the build's year.
 * Grain: source plan × county, and × ZIP when the crosswalk level is 3.
 */
import { DIAGNOSTIC_CODES, FatalBuildError, type DiagnosticSink } from '../read/diagnostics.ts';
import type { TableReader } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode, parseInteger } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';
import { DISCONTINUED_PLAN_ID, type CrosswalkPlanEntry, type CrosswalkRow } from '../../src/engine/crosswalk-record.ts';
import { STANDARD_COMPONENT_ID } from '../../src/engine/plan-record.ts';

export interface CrosswalkTable {
  readonly sourceYear: number;
  readonly targetYear: number;
  readonly rows: number;
  readonly plans: Map<string, CrosswalkPlanEntry>;
  readonly states: Set<string>;
}

/** Finds the year pair from `PlanID_<year>` columns. */
export function crosswalkYears(header: readonly string[]): { source: number; target: number } | null {
  const years = header
    .map((h) => /^PlanID_(\d{4})$/i.exec(h.trim())?.[1])
    .filter((y): y is string => y !== undefined)
    .map(Number)
    .sort();
  if (years.length !== 2 || years[1] !== years[0]! + 1) return null;
  return { source: years[0]!, target: years[1]! };
}

export async function loadCrosswalk(
  table: TableReader,
  year: number,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<CrosswalkTable> {
  const file = table.file;
  const years = crosswalkYears(table.header);
  if (years === null) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.missingColumn, `${file}:1: expected two PlanID_<year> columns of consecutive years`);
  }
  if (years.source !== year) {
    throw new FatalBuildError(
      DIAGNOSTIC_CODES.badFormat,
      `${file}: crosswalk maps ${years.source} → ${years.target}, but the build is for ${year}`,
    );
  }
  const s = years.source;
  const t = years.target;
  const plans = new Map<string, CrosswalkRow[]>();
  const states = new Set<string>();
  let rows = 0;
  const required = ['State', `PlanID_${s}`, 'FIPSCode', 'CrosswalkLevel', 'ReasonForCrosswalk', `PlanID_${t}`];
  const optional = ['DentalPlan', `IssuerID_${s}`, `MetalLevel_${s}`, 'ZipCode', `IssuerID_${t}`, `MetalLevel_${t}`, `AgeOffPlanID_${t}`];
  await forEachRow(table, { required, optional, stage: 'crosswalk' }, sink, progress, (row) => {
    const reject = (column: string, reason: string): void => sink.reject({ ...row.at(column), reason });
    const state = row.get('State');
    const source = row.get(`PlanID_${s}`);
    if (!/^[A-Z]{2}$/.test(state)) return reject('State', 'not a two-letter state code');
    if (!STANDARD_COMPONENT_ID.test(source)) return reject(`PlanID_${s}`, 'not a 14-character standard component id');
    const fips = padCode(row.get('FIPSCode'), 5);
    if (fips === null) return reject('FIPSCode', 'not a 5-digit county FIPS code');
    const level = parseInteger(row.get('CrosswalkLevel'));
    if (!level.ok || level.value === null || level.value < 0 || level.value > 9)
      return reject('CrosswalkLevel', 'not a crosswalk level 0–9');
    const reason = parseInteger(row.get('ReasonForCrosswalk'));
    if (!reason.ok || reason.value === null || reason.value < 0 || reason.value > 99)
      return reject('ReasonForCrosswalk', 'not a reason code');
    const target = row.get(`PlanID_${t}`);
    if (target !== '' && target !== DISCONTINUED_PLAN_ID && !STANDARD_COMPONENT_ID.test(target))
      return reject(`PlanID_${t}`, 'not a 14-character standard component id');
    const zip = padCode(row.get('ZipCode'), 5) ?? '00000';
    const text = (c: string): string | null => {
      const v = row.get(c);
      return v === '' ? null : v;
    };
    const issuerT = text(`IssuerID_${t}`);
    const entry: CrosswalkRow = {
      state,
      dental: row.get('DentalPlan').toUpperCase() === 'Y',
      source_plan_id: source,
      source_issuer_id: text(`IssuerID_${s}`),
      source_metal_level: text(`MetalLevel_${s}`),
      county_fips: fips,
      zip,
      crosswalk_level: level.value,
      reason_code: reason.value,
      target_plan_id: target === '' || target === DISCONTINUED_PLAN_ID ? null : target,
      target_issuer_id: issuerT === '00000' ? null : issuerT,
      target_metal_level: text(`MetalLevel_${t}`),
      age_off_plan_id: (() => {
        const v = text(`AgeOffPlanID_${t}`);
        return v === null || v === DISCONTINUED_PLAN_ID ? null : v;
      })(),
    };
    let list = plans.get(source);
    if (list === undefined) plans.set(source, (list = []));
    list.push(entry);
    states.add(state);
    rows++;
  });
  sink.checkRejectedShare(file);
  const out = new Map<string, CrosswalkPlanEntry>();
  for (const [id, list] of plans) out.set(id, { source_year: s, target_year: t, rows: list });
  return { sourceYear: s, targetYear: t, rows, plans: out, states };
}
