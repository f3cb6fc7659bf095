/**
 * @module Tests of the Rate PUF loader on files written here in the official 20-column layout (shuffled, and
 * zipped): age labels and bands, placeholders, rate periods, family tiers, diagnostics.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadRates } from '../../../build/puf/rates.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';
import { AGE_BAND_COUNT } from '../../../src/engine/age-bands.ts';
import { makeZip } from '../../helpers/zip-writer.ts';

/** Official column order (shared/data/README.md §7.1). */
const OFFICIAL = [
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
type Column = (typeof OFFICIAL)[number];
type Row = Partial<Record<Column, string>>;

/** The official columns in a fixed scrambled order. */
const SHUFFLED: readonly Column[] = [
  'Age',
  'CoupleAndTwoDependents',
  'IndividualRate',
  'StateCode',
  'RatingAreaId',
  'PrimarySubscriberAndOneDependent',
  'ImportDate',
  'PlanId',
  'Tobacco',
  'CoupleAndThreeOrMoreDependents',
  'RateExpirationDate',
  'BusinessYear',
  'Couple',
  'IndividualTobaccoRate',
  'PrimarySubscriberAndThreeOrMoreDependents',
  'SourceName',
  'RateEffectiveDate',
  'CoupleAndOneDependent',
  'IssuerId',
  'PrimarySubscriberAndTwoDependents',
];
assert.equal(SHUFFLED.length, 20);
assert.deepEqual([...SHUFFLED].sort(), [...OFFICIAL].sort());

const PLAN = '12345TX0010001';
const PLAN2 = '12345TX0010002';
const PLANS = new Set([PLAN, PLAN2]);

function rateRow(age: string, rate: string, over: Row = {}): Row {
  return {
    BusinessYear: '2025',
    StateCode: 'TX',
    IssuerId: '12345',
    SourceName: 'SERFF',
    ImportDate: '2024-10-01 10:00:00',
    RateEffectiveDate: '2025-01-01',
    RateExpirationDate: '2025-12-31',
    PlanId: PLAN,
    RatingAreaId: 'Rating Area 1',
    Tobacco: 'No Preference',
    Age: age,
    IndividualRate: rate,
    ...over,
  };
}

/** Age labels of a full rate table: 0-14, 15 … 63, 64 and over. */
const LABELS = ['0-14', ...Array.from({ length: 49 }, (_, i) => String(15 + i)), '64 and over'];

/** One full age table (51 rows); rate of band b is `base + b`. */
function fullTable(base: number, over: Row = {}): Row[] {
  return LABELS.map((l, b) => rateRow(l, (base + b).toFixed(2), over));
}

const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

function toCsv(rows: readonly Row[], header: readonly string[] = SHUFFLED): string {
  return `${[header.join(','), ...rows.map((r) => header.map((c) => csvField(r[c as Column] ?? '')).join(','))].join('\r\n')}\r\n`;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-rates-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

async function loadFile(file: string, plans: ReadonlySet<string> = PLANS, year = 2025) {
  const sink = new DiagnosticSink();
  const table = await openTable(file, 'rate-puf');
  const result = await loadRates(table, year, plans, sink, createProgress({ tty: false, quiet: true }));
  return { sink, result, counts: sink.files.get('rate-puf')!, ...result };
}

function load(rows: readonly Row[], plans: ReadonlySet<string> = PLANS, header: readonly string[] = SHUFFLED) {
  const file = path.join(dir, `rates-${++serial}.csv`);
  fs.writeFileSync(file, toCsv(rows, header));
  return loadFile(file, plans);
}

const cents = (r: Awaited<ReturnType<typeof load>>, plan = PLAN, area = 1): Uint32Array | undefined => r.rates.get(plan)?.get(area);

describe('loadRates', () => {
  it('reads the official 20 columns in a shuffled order: 0-14, 15 … 63, 64 and over', async () => {
    const r = await load([...fullTable(200), ...fullTable(300, { RatingAreaId: 'Rating Area 10' })]);
    assert.equal(AGE_BAND_COUNT, 51);
    const a1 = cents(r)!;
    const a10 = cents(r, PLAN, 10)!;
    assert.equal(a1.length, AGE_BAND_COUNT);
    for (let b = 0; b < AGE_BAND_COUNT; b++) {
      assert.equal(a1[b], (200 + b) * 100, `band ${b}`);
      assert.equal(a10[b], (300 + b) * 100, `band ${b}`);
    }
    assert.deepEqual(
      [...r.rates.get(PLAN)!.keys()].sort((x, y) => x - y),
      [1, 10],
    );
    assert.deepEqual(r.counts, { rowsRead: 102, rowsRejected: 0, rowsIgnored: 0 });
    assert.deepEqual([...r.sourceNames], ['SERFF']);
    assert.equal(r.newestImport, '2024-10-01');
    assert.equal(r.sink.kept.length, 0);
  });

  it('gives the same result with the official column order', async () => {
    const rows = fullTable(200);
    const a = await load(rows);
    const b = await load(rows, PLANS, OFFICIAL);
    assert.deepEqual(a.rates, b.rates);
  });

  it('stores exact cents', async () => {
    const r = await load([rateRow('0-14', '291.38'), rateRow('21', '0.29'), rateRow('40', '1234.565')]);
    const c = cents(r)!;
    assert.equal(c[0], 29138);
    assert.equal(c[7], 29);
    assert.equal(c[26], 123457);
  });

  it('fills bands 0–6 from "0-20"; an explicit "15" row wins whatever the row order', async () => {
    for (const order of ['broad first', 'specific first'] as const) {
      const broad = rateRow('0-20', '150.00');
      const specific = rateRow('15', '175.00');
      const r = await load(order === 'broad first' ? [broad, specific] : [specific, broad]);
      const c = cents(r)!;
      assert.equal(c[0], 15000, order);
      assert.equal(c[1], 17500, order);
      for (let b = 2; b <= 6; b++) assert.equal(c[b], 15000, `${order}: band ${b}`);
      assert.equal(c[7], 0, order);
      assert.equal(r.sink.errorCount, 0);
    }
  });

  it('ignores "65 and over" rows (priced as 64 and over)', async () => {
    const r = await load([rateRow('64 and over', '900.00'), rateRow('65 and over', '950.00')]);
    assert.equal(cents(r)![50], 90000);
    assert.deepEqual(r.counts, { rowsRead: 2, rowsRejected: 0, rowsIgnored: 1 });
    const r2 = await load([rateRow('65 and over', '950.00'), rateRow('64 and over', '900.00')]);
    assert.equal(cents(r2)![50], 90000);
  });

  it('treats placeholder rates (9999, 999999) as not sold: cents 0', async () => {
    const rows = fullTable(200);
    rows[16] = rateRow('30', '9999');
    rows[50] = rateRow('64 and over', '999999.00');
    const whole = LABELS.map((l) => rateRow(l, '999999', { PlanId: PLAN2 }));
    const r = await load([...rows, ...whole]);
    const c = cents(r)!;
    assert.equal(c[15], 21500);
    assert.equal(c[16], 0);
    assert.equal(c[17], 21700);
    assert.equal(c[50], 0);
    const c2 = cents(r, PLAN2);
    for (let b = 0; b < AGE_BAND_COUNT; b++) assert.equal(c2?.[b] ?? 0, 0);
    assert.equal(r.counts.rowsRejected, 0);
    assert.equal(r.counts.rowsIgnored, 2 + 51);
  });

  it('ignores rate periods that do not cover January 1', async () => {
    const r = await load([
      rateRow('40', '400.00', { RateEffectiveDate: '2024-10-01', RateExpirationDate: '2024-12-31' }),
      rateRow('40', '410.00', { RateEffectiveDate: '2025-01-01', RateExpirationDate: '2025-03-31' }),
      rateRow('40', '420.00', { RateEffectiveDate: '2025-04-01', RateExpirationDate: '2025-06-30' }),
      rateRow('41', '500.00', { RateEffectiveDate: '', RateExpirationDate: '' }),
      rateRow('42', '600.00', { RateEffectiveDate: '12/1/2024', RateExpirationDate: '12/31/2025' }),
    ]);
    const c = cents(r)!;
    assert.equal(c[26], 41000);
    assert.equal(c[27], 50000);
    assert.equal(c[28], 60000);
    assert.deepEqual(r.counts, { rowsRead: 5, rowsRejected: 0, rowsIgnored: 2 });
  });

  it('reads "Family Option" rows into familyTiers', async () => {
    const r = await load([
      rateRow('Family Option', '812.34', {
        StateCode: 'NY',
        RatingAreaId: 'Rating Area 4',
        Couple: '1624.68',
        PrimarySubscriberAndOneDependent: '1380.98',
        PrimarySubscriberAndTwoDependents: '1380.98',
        PrimarySubscriberAndThreeOrMoreDependents: '1380.98',
        CoupleAndOneDependent: '2315.17',
        CoupleAndTwoDependents: '2315.17',
        CoupleAndThreeOrMoreDependents: '',
      }),
    ]);
    // Community rated (no age rows, as in Vermont's SBE file): one rate, the individual one, at every age.
    assert.deepEqual([...new Set(r.rates.get(PLAN)?.get(4) ?? [])], [81234]);
    assert.deepEqual(r.familyTiers.get(PLAN)?.get(4), {
      individual: 812.34,
      couple: 1624.68,
      primarySubscriberAndOneDependent: 1380.98,
      primarySubscriberAndTwoDependents: 1380.98,
      primarySubscriberAndThreeOrMoreDependents: 1380.98,
      coupleAndOneDependent: 2315.17,
      coupleAndTwoDependents: 2315.17,
      coupleAndThreeOrMoreDependents: null,
    });
    assert.equal(r.sink.errorCount, 0);
  });

  it('keeps the age rows of a plan that also has a "Family Option" row (NY style)', async () => {
    const r = await load([...fullTable(200), rateRow('Family Option', '999.00', { Couple: '1998.00' })]);
    const cents = r.rates.get(PLAN)?.get(1);
    assert.ok(cents !== undefined);
    assert.notEqual(cents[0], 99900);
    assert.equal(r.familyTiers.get(PLAN)?.get(1)?.couple, 1998);
  });

  /** Two full tables (102 rows) then `bad` (line 104): 1 of 103 rows rejected stays within 1 %. */
  async function oneBad(bad: Row) {
    const r = await load([...fullTable(200), ...fullTable(300, { RatingAreaId: 'Rating Area 2' }), bad]);
    assert.equal(r.counts.rowsRejected, 1);
    const errors = r.sink.kept.filter((d) => d.severity === 'error');
    assert.equal(errors.length, 1);
    const d = errors[0]!;
    assert.equal(d.code, DIAGNOSTIC_CODES.rowRejected);
    assert.equal(d.file, 'rate-puf');
    assert.equal(d.line, 104);
    return { r, d };
  }

  it('rejects a bad RatingAreaId with its line, column and value', async () => {
    const { d, r } = await oneBad(rateRow('40', '400.00', { RatingAreaId: 'Area 7' }));
    assert.equal(d.columnName, 'RatingAreaId');
    assert.equal(d.column, SHUFFLED.indexOf('RatingAreaId') + 1);
    assert.equal(d.column, 5);
    assert.equal(d.value, 'Area 7');
    assert.match(d.reason, /Rating Area/);
    assert.equal(r.rates.get(PLAN)?.has(7), false);
  });

  it('rejects a bad Age label', async () => {
    const { d } = await oneBad(rateRow('sixty', '400.00', { RatingAreaId: 'Rating Area 3' }));
    assert.equal(d.columnName, 'Age');
    assert.equal(d.column, 1);
    assert.equal(d.value, 'sixty');
  });

  it('rejects an age below the 0-14 band as a one-year label ("14")', async () => {
    const { d } = await oneBad(rateRow('14', '100.00', { RatingAreaId: 'Rating Area 3' }));
    assert.equal(d.value, '14');
  });

  it('rejects a negative rate', async () => {
    const { d, r } = await oneBad(rateRow('40', '-5.00', { RatingAreaId: 'Rating Area 3' }));
    assert.equal(d.columnName, 'IndividualRate');
    assert.equal(d.column, SHUFFLED.indexOf('IndividualRate') + 1);
    assert.equal(d.value, '-5.00');
    assert.match(d.reason, /non-negative/);
    assert.equal(r.rates.get(PLAN)?.get(3)?.[26] ?? 0, 0);
  });

  it('rejects a non-numeric rate', async () => {
    const { d } = await oneBad(rateRow('40', '$400', { RatingAreaId: 'Rating Area 3' }));
    assert.equal(d.value, '$400');
  });

  it('rejects rows of another BusinessYear', async () => {
    const { d } = await oneBad(rateRow('40', '400', { BusinessYear: '2024' }));
    assert.equal(d.columnName, 'BusinessYear');
  });

  it('fails when more than 1 % of the rows are rejected', async () => {
    const rows = [...fullTable(200), ...fullTable(300, { RatingAreaId: 'Rating Area 2' }), rateRow('x', '1'), rateRow('y', '1')];
    await assert.rejects(load(rows), (err: unknown) => err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.tooManyRejected);
  });

  it('counts rows of plans outside the plan set as ignored', async () => {
    const r = await load([
      ...fullTable(200),
      rateRow('40', '30.00', { PlanId: '99999TX0090001' }), // stand-alone dental
      rateRow('40', '30.00', { PlanId: '99999TX0090002' }),
      rateRow('bad age', '30.00', { PlanId: '99999TX0090003' }), // not checked: not in the build
    ]);
    assert.deepEqual([...r.rates.keys()], [PLAN]);
    assert.deepEqual(r.counts, { rowsRead: 54, rowsRejected: 0, rowsIgnored: 3 });
  });

  it('fails on missing required columns', async () => {
    const header = SHUFFLED.filter((c) => c !== 'Age' && c !== 'IndividualRate');
    await assert.rejects(load([rateRow('40', '1')], PLANS, header), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.missingColumn);
      assert.match(err.message, /rate-puf:1: .*Age.*IndividualRate/);
      return true;
    });
  });

  it('reads a zipped Rate PUF like the CSV', async () => {
    const rows = [...fullTable(200), ...fullTable(250, { PlanId: PLAN2, RatingAreaId: 'Rating Area 27' }), rateRow('65 and over', '1')];
    const csv = Buffer.from(toCsv(rows));
    const csvFile = path.join(dir, 'rate-puf.csv');
    const zipFile = path.join(dir, 'rate-puf.zip');
    fs.writeFileSync(csvFile, csv);
    fs.writeFileSync(zipFile, makeZip([{ name: 'rate-puf.csv', data: csv, method: 8 }]));
    const a = await loadFile(csvFile);
    const b = await loadFile(zipFile);
    assert.deepEqual(b.rates, a.rates);
    assert.deepEqual(b.counts, a.counts);
    assert.deepEqual(b.counts, { rowsRead: 103, rowsRejected: 0, rowsIgnored: 1 });
    assert.equal(b.rates.get(PLAN2)?.get(27)?.[50], 30000);
  });
});
