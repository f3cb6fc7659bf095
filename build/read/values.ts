/**
 * @module Parsers for the value formats of CMS public use files (shared/data/README.md §4.1 and §5).
 *
 * Each parser trims first (PY2023 values carry trailing spaces), maps the file's "no value" spellings to null,
 * and otherwise either returns a finite number/boolean/date or says why it could not. They never return NaN and
 * never throw, because one odd cell must become a diagnostic on its row, not a crash or a silent NaN in the
 * build. Patterns are strict (e.g. thousands groups of exactly three digits) so a garbled value is reported
 * rather than read as a different number.
 */

/** A parsed cell: a value (null = the file says "no value"), or the reason it is not one. */
export type ParseResult<T> = { readonly ok: true; readonly value: T | null } | { readonly ok: false; readonly reason: string };

const NULL: { readonly ok: true; readonly value: null } = { ok: true, value: null };

function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

function fail(reason: string): { readonly ok: false; readonly reason: string } {
  return { ok: false, reason };
}

/** Spellings CMS uses for an amount that does not apply, compared lower-cased. */
const MONEY_NULLS: ReadonlySet<string> = new Set(['not applicable', 'per person not applicable', 'per group not applicable', 'n/a']);

// `$1,500`, `$1500 per person`, `$0 per group`, `1234.56`: optional $, either correctly grouped thousands or plain
// digits, optional cents, optional family suffix.
const MONEY = /^\$?\s*((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s+per\s+(?:person|group))?$/i;

/**
 * Dollar amount in whole dollars and cents as a number.
 * @example parseMoney('$1,500') → 1500; parseMoney('$3000 per person') → 3000; parseMoney('Not Applicable') → null
 */
export function parseMoney(raw: string): ParseResult<number> {
  const s = raw.trim();
  if (s === '' || MONEY_NULLS.has(s.toLowerCase())) return NULL;
  const m = MONEY.exec(s);
  if (m === null) return fail('not a dollar amount');
  const value = Number(m[1]!.replaceAll(',', ''));
  return Number.isFinite(value) ? ok(value) : fail('dollar amount out of range');
}

const PERCENT_NULLS: ReadonlySet<string> = new Set(['not applicable', 'n/a']);
const PERCENT = /^(\d+)(?:\.(\d*))?\s*(%?)$|^\.(\d+)\s*(%?)$/;

/**
 * A share as a fraction: `20.00%` → 0.2. A value without `%` is already a fraction (`0.9708` → 0.9708), which
 * is how CMS writes EHBPercentTotalPremium and AVCalculatorOutputNumber.
 * @example parsePercent('20.00%') → 0.2; parsePercent('100%') → 1; parsePercent('') → null
 */
export function parsePercent(raw: string): ParseResult<number> {
  const s = raw.trim();
  if (s === '' || PERCENT_NULLS.has(s.toLowerCase())) return NULL;
  const m = PERCENT.exec(s);
  if (m === null) return fail('not a percentage');
  const whole = m[1] ?? '0';
  const fraction = m[2] ?? m[4] ?? '';
  const percent = (m[3] ?? m[5]) === '%';
  // Shifting the decimal point in the text, rather than dividing by 100, gives the double nearest the written
  // value: 70.01 / 100 is 0.7001000000000001 but "0.7001" is 0.7001.
  const value = Number(percent ? shiftLeft2(whole, fraction) : `${whole}.${fraction}0`);
  return Number.isFinite(value) ? ok(value) : fail('percentage out of range');
}

/** `whole.fraction` divided by 100, as decimal text. */
function shiftLeft2(whole: string, fraction: string): string {
  const padded = whole.padStart(3, '0');
  return `${padded.slice(0, -2)}.${padded.slice(-2)}${fraction}`;
}

/**
 * `Yes`/`No`/`Y`/`N` in any case.
 * @example parseYesNo('Yes') → true; parseYesNo('n') → false; parseYesNo('') → null
 */
export function parseYesNo(raw: string): ParseResult<boolean> {
  const s = raw.trim().toLowerCase();
  if (s === '') return NULL;
  if (s === 'yes' || s === 'y') return ok(true);
  if (s === 'no' || s === 'n') return ok(false);
  return fail('not Yes or No');
}

// CMS writes some counts as "3.0"; a zero fraction is still an integer.
const INTEGER = /^[-+]?\d+(?:\.0*)?$/;

/**
 * A whole number (`3`, `-2`, `3.0`).
 * @example parseInteger('42') → 42; parseInteger('4.5') → not ok
 */
export function parseInteger(raw: string): ParseResult<number> {
  const s = raw.trim();
  if (s === '') return NULL;
  if (!INTEGER.test(s)) return fail('not a whole number');
  const value = Math.trunc(Number(s));
  return Number.isSafeInteger(value) ? ok(value) : fail('whole number out of range');
}

const DECIMAL = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * A plain decimal number (`1.0`, `0.7001186159724491`, `291.38`, `-3`); no `$`, `%` or thousands separators.
 * @example parseDecimal('0.9708') → 0.9708; parseDecimal('1,000') → not ok
 */
export function parseDecimal(raw: string): ParseResult<number> {
  const s = raw.trim();
  if (s === '') return NULL;
  if (!DECIMAL.test(s)) return fail('not a number');
  const value = Number(s);
  return Number.isFinite(value) ? ok(value) : fail('number out of range');
}

// ISO date with an optional time (space or T separated, optional seconds, fraction and zone).
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
// US M/D/YYYY with an optional H:MM[:SS] [AM|PM] time, as in PY2023 ImportDate.
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp][Mm]))?)?$/;

/**
 * A calendar date as `YYYY-MM-DD`, from ISO (`2024-12-05`, `2024-12-05 11:21:00`, `2024-05-09T10:00:00`) or US
 * (`2/24/2023 1:05`, `1/1/2023`) text. The time is validated and dropped; the date is taken as written, with no
 * time-zone shift, because CMS dates are calendar dates.
 * @example parseDate('2/24/2023 1:05') → '2023-02-24'; parseDate('2023-02-30') → not ok
 */
export function parseDate(raw: string): ParseResult<string> {
  const s = raw.trim();
  if (s === '') return NULL;
  let year: number;
  let month: number;
  let day: number;
  let hour: string | undefined;
  let minute: string | undefined;
  let second: string | undefined;
  let meridiem: string | undefined;
  const iso = ISO_DATE.exec(s);
  if (iso !== null) {
    year = Number(iso[1]);
    month = Number(iso[2]);
    day = Number(iso[3]);
    [hour, minute, second] = [iso[4], iso[5], iso[6]];
  } else {
    const us = US_DATE.exec(s);
    if (us === null) return fail('not a date (expected YYYY-MM-DD or M/D/YYYY)');
    month = Number(us[1]);
    day = Number(us[2]);
    year = Number(us[3]);
    [hour, minute, second, meridiem] = [us[4], us[5], us[6], us[7]];
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return fail('not a calendar date');
  if (hour !== undefined) {
    const h = Number(hour);
    const hourOk = meridiem === undefined ? h <= 23 : h >= 1 && h <= 12;
    if (!hourOk || Number(minute) > 59 || (second !== undefined && Number(second) > 59)) return fail('not a valid time of day');
  }
  return ok(`${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * A numeric code (ZIP, county or state FIPS) restored to its width: spreadsheets and the 2014 rating-area
 * table drop leading zeros. Null for blank, non-digit or too-long values, so a blank cell never becomes
 * `00000`.
 * @example padCode('1001', 5) === '01001'; padCode('', 5) === null
 */
export function padCode(raw: string, width: number): string | null {
  const t = raw.trim();
  if (t === '' || t.length > width || !/^\d+$/.test(t)) return null;
  return t.padStart(width, '0');
}
