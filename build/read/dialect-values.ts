/**
 * @module The one place where values spelled otherwise than in the federal PUFs are rewritten into the
 * federal spelling, before the federal parsers (values.ts) see them.
 *
 * Each function returns the value unchanged when it does not recognise it, so an odd value still
 * reaches the federal parser and becomes the usual diagnostic on its row rather than vanishing here.
 */

import { parsePercent } from './values.ts';

/**
 * `99%` (SBE `EHB PERCENT PREMIUM`) → `0.99`, the fraction the federal `EHBPercentTotalPremium` holds.
 * The text is shifted, not divided, so the value is the double nearest the written one.
 */
export function fractionOfPercent(raw: string): string {
  if (!raw.endsWith('%')) return raw;
  const r = parsePercent(raw);
  return r.ok && r.value !== null ? String(r.value) : raw;
}

/** `true`/`false` (SBE `COVER ENTIRE STATE`, `PARTIAL COUNTY`) → `Yes`/`No`. */
export function yesNoOfBoolean(raw: string): string {
  const s = raw.toLowerCase();
  if (s === 'true') return 'Yes';
  if (s === 'false') return 'No';
  return raw;
}

const DASHED_US_DATE = /^(\d{1,2})-(\d{1,2})-(\d{4})$/;
const SLASHED_US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

/**
 * A US date, `02-12-2024` (SBE Rates and Service Areas) or `2/12/2024` (SBE Plans), → `2024-02-12`.
 * The federal date parser then checks it is a calendar date.
 */
export function isoDateOfUs(raw: string): string {
  const m = DASHED_US_DATE.exec(raw) ?? SLASHED_US_DATE.exec(raw);
  if (m === null) return raw;
  return `${m[3]}-${m[1]!.padStart(2, '0')}-${m[2]!.padStart(2, '0')}`;
}

/**
 * One half of an SBE family amount: the SBE Plans PUF writes both family amounts in one cell,
 * `$6550 per person | $13100 per group` (or `per person not applicable | per group not applicable`),
 * where the federal file has a `…FamilyPerPerson` and a `…FamilyPerGroup` column.
 */
export function familyAmount(part: 'person' | 'group'): (raw: string) => string {
  return (raw) => {
    if (!raw.includes('|')) return raw;
    const pieces = raw.split('|').map((p) => p.trim());
    return pieces.find((p) => p.toLowerCase().includes(`per ${part}`)) ?? raw;
  };
}

/** Columns that carry the premiums of the family tiers in a Rate PUF row. */
const TIER_COLUMNS = ['COUPLE', 'PRIMARY SUBSCRIBER AND ONE DEPENDENT', 'COUPLE AND ONE DEPENDENT'] as const;

/**
 * The SBE Rates PUF leaves `AGE` empty on community-rated rows (Vermont), which carry the family-tier
 * premiums; the federal file labels those rows `Family Option`. An empty age without any tier amount
 * stays empty, and the rates loader rejects it.
 */
export function ageOfTierRow(raw: string, cell: (fileColumn: string) => string): string {
  if (raw !== '') return raw;
  return TIER_COLUMNS.some((c) => cell(c) !== '') ? 'Family Option' : raw;
}
