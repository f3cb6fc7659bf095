/**
 * @module Loader of the CMS Service Area PUF: which counties, or ZIPs of a county, an issuer's service
 * area covers.
 *
 * Only individual-market service areas are kept, keyed by issuer and service area id (the id is unique
 * only within an issuer); medical ones in the returned map, stand-alone dental ones in
 * the map the caller passes for them, if any, so that medical plans never see a dental area. A whole-state row expands later, against the geography, to every county of
 * the state; a partial-county row keeps its ZIP list so that a plan is offered only in those ZIPs.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { TableReader } from '../read/table.ts';
import { forEachRow } from '../read/table-rows.ts';
import { padCode } from '../read/values.ts';
import type { ProgressSink } from '../progress.ts';

export interface ServiceArea {
  readonly issuerId: string;
  readonly serviceAreaId: string;
  readonly state: string;
  coverEntireState: boolean;
  /** County FIPS → null for the whole county, or the covered ZIPs of a partial county. */
  readonly counties: Map<string, Set<string> | null>;
}

export function serviceAreaKey(issuerId: string, serviceAreaId: string): string {
  return `${issuerId}|${serviceAreaId}`;
}

const REQUIRED = [
  'BusinessYear',
  'StateCode',
  'IssuerId',
  'ServiceAreaId',
  'CoverEntireState',
  'County',
  'MarketCoverage',
  'DentalOnlyPlan',
] as const;
const OPTIONAL = ['PartialCounty', 'ZipCodes', 'ServiceAreaName', 'ImportDate'] as const;

export async function loadServiceAreas(
  table: TableReader,
  year: number,
  sink: DiagnosticSink,
  progress: ProgressSink,
  dental?: Map<string, ServiceArea>,
): Promise<Map<string, ServiceArea>> {
  const medical = new Map<string, ServiceArea>();
  const file = table.file;
  await forEachRow(table, { required: REQUIRED, optional: OPTIONAL, stage: 'service areas' }, sink, progress, (row) => {
    const reject = (column: string, reason: string): void => sink.reject({ ...row.at(column), reason });
    if (row.get('BusinessYear') !== String(year)) return reject('BusinessYear', `BusinessYear is not the build year ${year}`);
    const dentalOnly = row.get('DentalOnlyPlan').toLowerCase();
    const areas = dentalOnly === 'no' ? medical : dentalOnly === 'yes' ? dental : undefined;
    if (row.get('MarketCoverage') !== 'Individual' || areas === undefined) {
      sink.rowIgnored(file);
      return;
    }
    const issuerId = row.get('IssuerId');
    const state = row.get('StateCode');
    const saId = row.get('ServiceAreaId');
    if (!/^\d{5}$/.test(issuerId)) return reject('IssuerId', 'not a 5-digit issuer id');
    if (!/^[A-Z]{2}$/.test(state)) return reject('StateCode', 'not a two-letter state code');
    if (saId === '') return reject('ServiceAreaId', 'empty service area id');
    const key = serviceAreaKey(issuerId, saId);
    let sa = areas.get(key);
    if (sa === undefined) {
      sa = { issuerId, serviceAreaId: saId, state, coverEntireState: false, counties: new Map() };
      areas.set(key, sa);
    }
    const entire = row.get('CoverEntireState').toLowerCase() === 'yes';
    if (entire) {
      sa.coverEntireState = true;
      return;
    }
    const county = padCode(row.get('County'), 5);
    if (county === null) return reject('County', 'not a 5-digit county FIPS code');
    const partial = row.get('PartialCounty').toLowerCase() === 'yes';
    if (!partial) {
      sa.counties.set(county, null);
      return;
    }
    const zips = new Set<string>();
    for (const z of row.get('ZipCodes').split(/[,;\s]+/)) {
      if (z === '') continue;
      if (/^\d{5}$/.test(z)) zips.add(z);
      else
        sink.warn({
          ...row.at('ZipCodes', z),
          reason: 'not a 5-digit ZIP; left out of the partial county',
        });
    }
    if (zips.size === 0) return reject('ZipCodes', 'partial county without any ZIP code');
    const existing = sa.counties.get(county);
    if (existing === null) return; // whole county already covered by another row
    if (existing !== undefined) for (const z of existing) zips.add(z);
    sa.counties.set(county, zips);
  });
  sink.checkRejectedShare(file);
  return medical;
}
