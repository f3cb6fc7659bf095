/**
 * @module Tests of the Service Area PUF loader on files written here in the official 14-column layout, and on the
 * real PY2025 file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadServiceAreas, serviceAreaKey } from '../../../build/puf/service-area.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';

const REAL_FILE = '/work/shared/data/cms/py2025/service-area-puf.csv';

/** The exact header (shared/data/README.md §4.2). */
const HEADER = [
  'BusinessYear',
  'StateCode',
  'IssuerId',
  'SourceName',
  'ImportDate',
  'ServiceAreaId',
  'ServiceAreaName',
  'CoverEntireState',
  'County',
  'PartialCounty',
  'ZipCodes',
  'PartialCountyJustification',
  'MarketCoverage',
  'DentalOnlyPlan',
] as const;
type Column = (typeof HEADER)[number];
type Row = Partial<Record<Column, string>>;

function saRow(over: Row = {}): Row {
  return {
    BusinessYear: '2025',
    StateCode: 'MI',
    IssuerId: '11111',
    SourceName: 'HIOS',
    ImportDate: '2024-08-29 01:02:15',
    ServiceAreaId: 'MIS001',
    ServiceAreaName: 'Michigan, west',
    CoverEntireState: 'No',
    County: '26081',
    PartialCounty: 'No',
    ZipCodes: '',
    PartialCountyJustification: '',
    MarketCoverage: 'Individual',
    DentalOnlyPlan: 'No',
    ...over,
  };
}

/** `n` whole-county rows of one filler service area (issuer 99999), so a single rejected row stays within 1 %. */
function filler(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => saRow({ IssuerId: '99999', ServiceAreaId: 'MIS099', County: String(26001 + 2 * i) }));
}

const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

function toCsv(rows: readonly Row[], header: readonly string[] = HEADER): string {
  return `${[header.join(','), ...rows.map((r) => header.map((c) => csvField(r[c as Column] ?? '')).join(','))].join('\r\n')}\r\n`;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-sa-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

async function load(content: string, year = 2025) {
  const file = path.join(dir, `sa-${++serial}.csv`);
  fs.writeFileSync(file, content);
  const sink = new DiagnosticSink();
  const table = await openTable(file, 'service-area.csv');
  const areas = await loadServiceAreas(table, year, sink, createProgress({ tty: false, quiet: true }));
  return { sink, areas, counts: sink.files.get('service-area.csv')! };
}

describe('loadServiceAreas', () => {
  it('keeps a whole-state row as coverEntireState without counties', async () => {
    const { areas, sink } = await load(
      toCsv([
        saRow({ StateCode: 'AK', IssuerId: '22222', ServiceAreaId: 'AKS001', CoverEntireState: 'Yes', County: '', PartialCounty: '' }),
      ]),
    );
    const sa = areas.get(serviceAreaKey('22222', 'AKS001'));
    assert.ok(sa);
    assert.equal(sa.coverEntireState, true);
    assert.equal(sa.state, 'AK');
    assert.equal(sa.issuerId, '22222');
    assert.equal(sa.serviceAreaId, 'AKS001');
    assert.equal(sa.counties.size, 0);
    assert.equal(sink.errorCount, 0);
    assert.equal(sink.warningCount, 0);
  });

  it('gathers the county rows of one service area, each as a whole county', async () => {
    const { areas } = await load(
      toCsv([
        saRow({ County: '26081' }),
        saRow({ County: '26139' }),
        saRow({ County: '2005', StateCode: 'AK', IssuerId: '22222', ServiceAreaId: 'AKS002' }),
      ]),
    );
    const sa = areas.get('11111|MIS001');
    assert.ok(sa);
    assert.equal(sa.coverEntireState, false);
    assert.deepEqual(
      [...sa.counties],
      [
        ['26081', null],
        ['26139', null],
      ],
    );
    // County codes are zero-padded to 5 digits.
    assert.deepEqual([...areas.get('22222|AKS002')!.counties.keys()], ['02005']);
  });

  it('keys service areas by issuer and id: the same id under two issuers stays apart', async () => {
    const { areas } = await load(toCsv([saRow({ County: '26081' }), saRow({ IssuerId: '33333', County: '26139' })]));
    assert.deepEqual([...areas.get('11111|MIS001')!.counties.keys()], ['26081']);
    assert.deepEqual([...areas.get('33333|MIS001')!.counties.keys()], ['26139']);
  });

  it('keeps the ZIP list of a partial county ("49070, 49311")', async () => {
    const { areas, sink } = await load(
      toCsv([saRow({ County: '26005', PartialCounty: 'Yes', ZipCodes: '49070, 49311', PartialCountyJustification: 'doc.pdf' })]),
    );
    const zips = areas.get('11111|MIS001')!.counties.get('26005');
    assert.ok(zips instanceof Set);
    assert.deepEqual([...zips].sort(), ['49070', '49311']);
    assert.equal(sink.warningCount, 0);
  });

  it('merges the ZIPs of two partial rows of one county; a whole-county row wins', async () => {
    const { areas } = await load(
      toCsv([
        saRow({ County: '26005', PartialCounty: 'Yes', ZipCodes: '49070' }),
        saRow({ County: '26005', PartialCounty: 'Yes', ZipCodes: '49311, 49314' }),
        saRow({ County: '26015' }),
        saRow({ County: '26015', PartialCounty: 'Yes', ZipCodes: '49058' }),
        saRow({ County: '26017', PartialCounty: 'Yes', ZipCodes: '48706' }),
        saRow({ County: '26017' }),
      ]),
    );
    const sa = areas.get('11111|MIS001')!;
    assert.deepEqual([...(sa.counties.get('26005') as Set<string>)].sort(), ['49070', '49311', '49314']);
    assert.equal(sa.counties.get('26015'), null);
    assert.equal(sa.counties.get('26017'), null);
  });

  it('rejects a partial county without any ZIP code', async () => {
    const rows = [...filler(99), saRow({ County: '26005', PartialCounty: 'Yes', ZipCodes: '' })];
    const { sink, areas, counts } = await load(toCsv(rows));
    assert.equal(counts.rowsRejected, 1);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    assert.equal(d.code, DIAGNOSTIC_CODES.rowRejected);
    assert.equal(d.file, 'service-area.csv');
    assert.equal(d.line, 101);
    assert.equal(d.columnName, 'ZipCodes');
    assert.equal(d.column, HEADER.indexOf('ZipCodes') + 1);
    assert.match(d.reason, /partial county/);
    assert.equal(areas.get('11111|MIS001')?.counties.has('26005') ?? false, false);
  });

  it('warns about a malformed ZIP in a list and keeps the others', async () => {
    const { sink, areas } = await load(toCsv([saRow({ County: '26005', PartialCounty: 'Yes', ZipCodes: '49070, 4931, 49314' })]));
    assert.deepEqual([...(areas.get('11111|MIS001')!.counties.get('26005') as Set<string>)].sort(), ['49070', '49314']);
    assert.equal(sink.warningCount, 1);
    assert.equal(sink.kept[0]!.value, '4931');
    assert.equal(sink.kept[0]!.line, 2);
  });

  it('ignores SHOP and dental rows and counts them in rowsIgnored', async () => {
    const { areas, counts, sink } = await load(
      toCsv([
        saRow(),
        saRow({ IssuerId: '44444', MarketCoverage: 'SHOP (Small Group)' }),
        saRow({ IssuerId: '55555', DentalOnlyPlan: 'Yes' }),
        saRow({ IssuerId: '66666', MarketCoverage: 'SHOP (Small Group)', DentalOnlyPlan: 'Yes' }),
      ]),
    );
    assert.deepEqual([...areas.keys()], ['11111|MIS001']);
    assert.deepEqual(counts, { rowsRead: 4, rowsRejected: 0, rowsIgnored: 3 });
    assert.equal(sink.errorCount, 0);
  });

  it('rejects a bad county code with its line and column', async () => {
    const rows = [...filler(50), saRow({ County: '26X81' }), ...filler(49)];
    const { sink, counts } = await load(toCsv(rows));
    assert.equal(counts.rowsRejected, 1);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    assert.equal(d.line, 52);
    assert.equal(d.column, 9);
    assert.equal(d.columnName, 'County');
    assert.equal(d.value, '26X81');
    assert.match(d.reason, /FIPS/);
  });

  it('rejects a county row whose County is blank (it is not a county "00000")', async () => {
    const rows = [...filler(99), saRow({ County: '', CoverEntireState: 'No' })];
    const { sink, areas, counts } = await load(toCsv(rows));
    assert.equal(areas.get('11111|MIS001')?.counties.has('00000') ?? false, false, 'blank County stored as county 00000');
    assert.equal(counts.rowsRejected, 1);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    assert.equal(d.columnName, 'County');
    assert.equal(d.line, 101);
  });

  it('fails when more than 1 % of the rows are rejected', async () => {
    const rows = [...filler(98), saRow({ County: '26X81' }), saRow({ IssuerId: '123' })];
    await assert.rejects(
      load(toCsv(rows)),
      (err: unknown) => err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.tooManyRejected,
    );
  });

  it('fails on missing required columns, naming them all', async () => {
    const header = HEADER.filter((h) => h !== 'County' && h !== 'CoverEntireState');
    await assert.rejects(load(toCsv([saRow()], header)), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.missingColumn);
      assert.match(err.message, /^service-area\.csv:1: .*CoverEntireState.*County/);
      return true;
    });
  });

  it('loads the real PY2025 file with 0 rejected rows', async () => {
    const sink = new DiagnosticSink();
    const table = await openTable(REAL_FILE);
    const areas = await loadServiceAreas(table, 2025, sink, createProgress({ tty: false, quiet: true }));
    const counts = sink.files.get(table.file)!;
    // shared/data/README.md §4.2: 11,761 rows; 3,055 + 1,090 + 111 dental or SHOP rows.
    assert.deepEqual(counts, { rowsRead: 11761, rowsRejected: 0, rowsIgnored: 3055 + 1090 + 111 });
    assert.equal(sink.errorCount, 0);
    assert.equal(sink.warningCount, 0);
    const all = [...areas.values()];
    assert.equal(new Set(all.map((a) => a.state)).size, 31);
    let partial = 0;
    for (const a of all) for (const z of a.counties.values()) if (z !== null) partial++;
    assert.ok(partial > 0 && partial <= 25, `partial counties: ${partial}`);
    assert.ok(all.some((a) => a.coverEntireState));
  });
});
