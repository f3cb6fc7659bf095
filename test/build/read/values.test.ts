/**
 * @module Tests of the CMS value parsers on the spellings documented in shared/data/README.md §4.1 and §5,
 * including what must be refused rather than read as a different number.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { padCode, parseDate, parseDecimal, parseInteger, parseMoney, parsePercent, parseYesNo } from '../../../build/read/values.ts';
import type { ParseResult } from '../../../build/read/values.ts';

function value<T>(r: ParseResult<T>): T | null {
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(r)}`);
  return r.value;
}

function refused<T>(r: ParseResult<T>): string {
  assert.equal(r.ok, false, `expected a refusal, got ${JSON.stringify(r)}`);
  return r.ok ? '' : r.reason;
}

describe('parseMoney', () => {
  it('reads individual and family dollar amounts', () => {
    assert.equal(value(parseMoney('$1,500')), 1500);
    assert.equal(value(parseMoney('$9,200')), 9200);
    assert.equal(value(parseMoney('$0')), 0);
    assert.equal(value(parseMoney('$3000 per person')), 3000);
    assert.equal(value(parseMoney('$0 per group')), 0);
    assert.equal(value(parseMoney('$18,400 per group')), 18400);
    assert.equal(value(parseMoney('$9,100 ')), 9100);
    assert.equal(value(parseMoney('  $60')), 60);
    assert.equal(value(parseMoney('1234.56')), 1234.56);
    assert.equal(value(parseMoney('$1,234,567.89')), 1234567.89);
  });

  it('maps the not-applicable spellings and blanks to null', () => {
    for (const raw of ['', '   ', 'Not Applicable', 'not applicable', 'per person not applicable', 'per group not applicable', 'N/A']) {
      assert.equal(value(parseMoney(raw)), null, raw);
    }
  });

  it('refuses anything else', () => {
    for (const raw of ['abc', '$1,2x', '$1,2', '$12,34', '1,5000', '$', '$-5', '$1500 per family', 'NaN', 'Infinity', '1e3']) {
      assert.ok(refused(parseMoney(raw)).length > 0, raw);
    }
  });
});

describe('parsePercent', () => {
  it('reads percentages as fractions and bare numbers as fractions already', () => {
    assert.equal(value(parsePercent('20.00%')), 0.2);
    assert.equal(value(parsePercent('100%')), 1);
    assert.equal(value(parsePercent('100.00%')), 1);
    assert.equal(value(parsePercent('0.00%')), 0);
    assert.equal(value(parsePercent('70.01%')), 0.7001);
    assert.equal(value(parsePercent('5.5 %')), 0.055);
    assert.equal(value(parsePercent(' 85% ')), 0.85);
    assert.equal(value(parsePercent('0.9708')), 0.9708);
    assert.equal(value(parsePercent('1')), 1);
    assert.equal(value(parsePercent('0.7001186159724491')), 0.7001186159724491);
  });

  it('maps blanks and Not Applicable to null and refuses the rest', () => {
    assert.equal(value(parsePercent('')), null);
    assert.equal(value(parsePercent('Not Applicable')), null);
    for (const raw of ['abc', '20%%', '%', '-5%', '20 percent', '1,000%']) refused(parsePercent(raw));
  });
});

describe('parseYesNo', () => {
  it('reads Yes/No/Y/N in any case, blank as null, and refuses the rest', () => {
    assert.equal(value(parseYesNo('Yes')), true);
    assert.equal(value(parseYesNo('YES ')), true);
    assert.equal(value(parseYesNo('y')), true);
    assert.equal(value(parseYesNo('No')), false);
    assert.equal(value(parseYesNo('n')), false);
    assert.equal(value(parseYesNo('')), null);
    for (const raw of ['True', 'maybe', '1', 'Yess']) refused(parseYesNo(raw));
  });
});

describe('parseInteger and parseDecimal', () => {
  it('reads plain integers, including a zero fraction', () => {
    assert.equal(value(parseInteger('42')), 42);
    assert.equal(value(parseInteger(' -3 ')), -3);
    assert.equal(value(parseInteger('3.0')), 3);
    assert.equal(value(parseInteger('')), null);
    for (const raw of ['4.5', '1,000', 'x', '1e3', '99999999999999999999']) refused(parseInteger(raw));
  });

  it('reads plain decimals and never returns NaN', () => {
    assert.equal(value(parseDecimal('1.0')), 1);
    assert.equal(value(parseDecimal('0.9708')), 0.9708);
    assert.equal(value(parseDecimal('291.38')), 291.38);
    assert.equal(value(parseDecimal('-2')), -2);
    assert.equal(value(parseDecimal('.5')), 0.5);
    assert.equal(value(parseDecimal('1e-3')), 0.001);
    assert.equal(value(parseDecimal('')), null);
    for (const raw of ['NaN', 'Infinity', '1,000', '$5', '5%', '1.2.3', '-', '.', '1e999']) refused(parseDecimal(raw));
  });
});

describe('parseDate', () => {
  it('reads ISO and US dates, with or without a time, as YYYY-MM-DD', () => {
    assert.equal(value(parseDate('2024-12-05')), '2024-12-05');
    assert.equal(value(parseDate('2024-12-05 11:21:00')), '2024-12-05');
    assert.equal(value(parseDate('2024-05-09T10:00:00')), '2024-05-09');
    assert.equal(value(parseDate('2024-05-09T10:00:00.123Z')), '2024-05-09');
    assert.equal(value(parseDate('2/24/2023 1:05')), '2023-02-24');
    assert.equal(value(parseDate('1/1/2023')), '2023-01-01');
    assert.equal(value(parseDate('12/31/2023 11:59:59 PM')), '2023-12-31');
    assert.equal(value(parseDate(' 2024-02-29 ')), '2024-02-29');
    assert.equal(value(parseDate('')), null);
  });

  it('refuses invalid calendar dates, times and other text', () => {
    const invalid = [
      ...['2023-02-29', '2100-02-29', '2024-13-01', '2024-04-31', '2024-00-10', '13/1/2023', '2/30/2023'],
      ...['2024-12-05 24:00', '2/24/2023 1:60', '2/24/2023 13:00 PM', 'yesterday', '2024/12/05', '24-12-05'],
    ];
    for (const raw of invalid) refused(parseDate(raw));
    assert.equal(value(parseDate('2000-02-29')), '2000-02-29');
  });
});

it('padCode restores leading zeros and never turns a blank into a code', () => {
  assert.equal(padCode('1001', 5), '01001');
  assert.equal(padCode(' 02020 ', 5), '02020');
  assert.equal(padCode('10', 3), '010');
  assert.equal(padCode('', 5), null);
  assert.equal(padCode('   ', 5), null);
  assert.equal(padCode('123456', 5), null);
  assert.equal(padCode('12a45', 5), null);
});
