/**
 * @module Tests of the Plan ID Crosswalk PUF loader on files written here with the official 24-column header
 * (shared/data/README.md §7.3), whose year suffixes change with every edition.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { crosswalkYears, loadCrosswalk } from '../../../build/puf/crosswalk.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';

/** The official header for the edition mapping `s` → `s + 1`, in official order. */
function header(s: number): string[] {
  const t = s + 1;
  return [
    'State',
    'DentalPlan',
    `PlanID_${s}`,
    `IssuerID_${s}`,
    `MultistatePlan_${s}`,
    `MetalLevel_${s}`,
    `ChildAdultOnly_${s}`,
    'FIPSCode',
    'ZipCode',
    'CrosswalkLevel',
    'ReasonForCrosswalk',
    `PlanID_${t}`,
    `IssuerID_${t}`,
    `MultistatePlan_${t}`,
    `MetalLevel_${t}`,
    `ChildAdultOnly_${t}`,
    `AgeOffPlanID_${t}`,
    `IssuerID_AgeOff${t}`,
    `MultistatePlan_AgeOff${t}`,
    `MetalLevel_AgeOff${t}`,
    `ChildAdultOnly_AgeOff${t}`,
    'ReasonForBronzeToSilverCrosswalk',
    `SilverCSREligPlanID_${t}`,
    `SilverCSREligIssuerID_${t}`,
  ];
}

const PY2025_HEADER =
  'State,DentalPlan,PlanID_2025,IssuerID_2025,MultistatePlan_2025,MetalLevel_2025,ChildAdultOnly_2025,FIPSCode,ZipCode,CrosswalkLevel,ReasonForCrosswalk,PlanID_2026,IssuerID_2026,MultistatePlan_2026,MetalLevel_2026,ChildAdultOnly_2026,AgeOffPlanID_2026,IssuerID_AgeOff2026,MultistatePlan_AgeOff2026,MetalLevel_AgeOff2026,ChildAdultOnly_AgeOff2026,ReasonForBronzeToSilverCrosswalk,SilverCSREligPlanID_2026,SilverCSREligIssuerID_2026';

type Row = Record<string, string>;

/** A crosswalk row of the edition `s` → `s + 1`; short names (source, target...) are mapped to the year columns. */
function xRow(
  s: number,
  v: {
    source: string;
    target: string;
    fips?: string;
    zip?: string;
    level?: string;
    reason?: string;
    state?: string;
    ageOff?: string;
    targetIssuer?: string;
    dental?: string;
  },
): Row {
  const t = s + 1;
  return {
    State: v.state ?? 'TX',
    DentalPlan: v.dental ?? 'N',
    [`PlanID_${s}`]: v.source,
    [`IssuerID_${s}`]: v.source.slice(0, 5),
    [`MultistatePlan_${s}`]: 'N',
    [`MetalLevel_${s}`]: 'Silver',
    [`ChildAdultOnly_${s}`]: '0',
    FIPSCode: v.fips ?? '48201',
    ZipCode: v.zip ?? '00000',
    CrosswalkLevel: v.level ?? '0',
    ReasonForCrosswalk: v.reason ?? '0',
    [`PlanID_${t}`]: v.target,
    [`IssuerID_${t}`]: v.targetIssuer ?? v.target.slice(0, 5),
    [`MultistatePlan_${t}`]: 'N',
    [`MetalLevel_${t}`]: 'Silver',
    [`ChildAdultOnly_${t}`]: '0',
    [`AgeOffPlanID_${t}`]: v.ageOff ?? '',
    [`IssuerID_AgeOff${t}`]: '',
    ReasonForBronzeToSilverCrosswalk: '',
  };
}

function toCsv(h: readonly string[], rows: readonly Row[]): string {
  return `${[h.join(','), ...rows.map((r) => h.map((c) => r[c] ?? '').join(','))].join('\r\n')}\r\n`;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-xw-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

async function load(content: string, year: number) {
  const file = path.join(dir, `xw-${++serial}.csv`);
  fs.writeFileSync(file, content);
  const sink = new DiagnosticSink();
  const table = await openTable(file, 'plan-id-crosswalk-puf.csv');
  const result = await loadCrosswalk(table, year, sink, createProgress({ tty: false, quiet: true }));
  return { sink, result, counts: sink.files.get('plan-id-crosswalk-puf.csv')! };
}

/** `n` level-0 rows of distinct plans, so one rejected row stays within 1 %. */
function filler(s: number, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => {
    const id = `77777TX${String(9000000 + i)}`;
    return xRow(s, { source: id, target: id });
  });
}

describe('crosswalkYears', () => {
  it('reads the year pair from the header', () => {
    assert.deepEqual(crosswalkYears(PY2025_HEADER.split(',')), { source: 2025, target: 2026 });
    assert.deepEqual(crosswalkYears(header(2024)), { source: 2024, target: 2025 });
    assert.deepEqual(crosswalkYears([...header(2025)].reverse()), { source: 2025, target: 2026 });
  });

  it('returns null without two PlanID_<year> columns of consecutive years', () => {
    assert.equal(crosswalkYears(['State', 'PlanID_2025', 'FIPSCode']), null);
    assert.equal(crosswalkYears(['PlanID_2024', 'PlanID_2026']), null);
    assert.equal(crosswalkYears(['PlanID', 'PlanId']), null);
  });
});

describe('loadCrosswalk', () => {
  it('has the 24-column official PY2025 → PY2026 header', () => {
    assert.deepEqual(header(2025), PY2025_HEADER.split(','));
    assert.equal(header(2025).length, 24);
  });

  it('loads the PY2025 → PY2026 edition in official order', async () => {
    const rows = [
      xRow(2025, { source: '11111TX0010001', target: '11111TX0010001', level: '0', reason: '0' }),
      xRow(2025, { source: '11111TX0010002', target: '11111TX0010099', level: '1', reason: '1', fips: '48157' }),
      xRow(2025, { source: '11111TX0010003', target: '00000XX0000000', targetIssuer: '00000', level: '4', reason: '6' }),
      xRow(2025, { source: '22222AK0020001', target: '22222AK0020001', state: 'AK', fips: '2020', ageOff: '00000XX0000000' }),
      xRow(2025, { source: '22222AK0020002', target: '22222AK0020003', state: 'AK', fips: '02020', ageOff: '22222AK0020004', dental: 'Y' }),
    ];
    const { result, sink, counts } = await load(toCsv(PY2025_HEADER.split(','), rows), 2025);
    assert.equal(result.sourceYear, 2025);
    assert.equal(result.targetYear, 2026);
    assert.equal(result.rows, 5);
    assert.deepEqual([...result.states].sort(), ['AK', 'TX']);
    assert.deepEqual(counts, { rowsRead: 5, rowsRejected: 0, rowsIgnored: 0 });
    assert.equal(sink.warningCount, 0);
    const same = result.plans.get('11111TX0010001')!;
    assert.equal(same.source_year, 2025);
    assert.equal(same.target_year, 2026);
    assert.deepEqual(same.rows[0], {
      state: 'TX',
      dental: false,
      source_plan_id: '11111TX0010001',
      source_issuer_id: '11111',
      source_metal_level: 'Silver',
      county_fips: '48201',
      zip: '00000',
      crosswalk_level: 0,
      reason_code: 0,
      target_plan_id: '11111TX0010001',
      target_issuer_id: '11111',
      target_metal_level: 'Silver',
      age_off_plan_id: null,
    });
    assert.equal(result.plans.get('11111TX0010002')!.rows[0]!.target_plan_id, '11111TX0010099');
    assert.equal(result.plans.get('11111TX0010002')!.rows[0]!.county_fips, '48157');
    // AK row with an unpadded FIPS code.
    assert.equal(result.plans.get('22222AK0020001')!.rows[0]!.county_fips, '02020');
    assert.equal(result.plans.get('22222AK0020001')!.rows[0]!.age_off_plan_id, null);
    const dental = result.plans.get('22222AK0020002')!.rows[0]!;
    assert.equal(dental.dental, true);
    assert.equal(dental.age_off_plan_id, '22222AK0020004');
  });

  it('maps the discontinued sentinel 00000XX0000000 (and issuer 00000) to null', async () => {
    const { result } = await load(
      toCsv(header(2025), [
        xRow(2025, { source: '11111TX0010003', target: '00000XX0000000', targetIssuer: '00000', level: '4', reason: '6' }),
      ]),
      2025,
    );
    const row = result.plans.get('11111TX0010003')!.rows[0]!;
    assert.equal(row.target_plan_id, null);
    assert.equal(row.target_issuer_id, null);
    assert.equal(row.crosswalk_level, 4);
    assert.equal(row.reason_code, 6);
  });

  it('keeps ZIP-level (level 3) rows of one plan and county apart', async () => {
    const rows = [
      xRow(2025, { source: '33333TX0030001', target: '33333TX0030010', level: '3', reason: '2', zip: '77002' }),
      xRow(2025, { source: '33333TX0030001', target: '33333TX0030020', level: '3', reason: '2', zip: '77003' }),
      xRow(2025, { source: '33333TX0030001', target: '33333TX0030030', level: '2', reason: '2', fips: '48157' }),
    ];
    const { result } = await load(toCsv(header(2025), rows), 2025);
    const entry = result.plans.get('33333TX0030001')!;
    assert.equal(entry.rows.length, 3);
    assert.deepEqual(
      entry.rows.map((r) => [r.county_fips, r.zip, r.crosswalk_level, r.target_plan_id]),
      [
        ['48201', '77002', 3, '33333TX0030010'],
        ['48201', '77003', 3, '33333TX0030020'],
        ['48157', '00000', 2, '33333TX0030030'],
      ],
    );
  });

  it('keeps reason codes 0, 1, 2, 3, 6, 7, 8, 10 as numbers', async () => {
    const codes = ['0', '1', '2', '3', '6', '7', '8', '10'];
    const rows = codes.map((c, i) =>
      xRow(2025, { source: `44444TX00400${String(i).padStart(2, '0')}`, target: '44444TX0049999', reason: c, level: '1' }),
    );
    const { result, sink } = await load(toCsv(header(2025), rows), 2025);
    const got = codes.map((_, i) => result.plans.get(`44444TX00400${String(i).padStart(2, '0')}`)!.rows[0]!.reason_code);
    assert.deepEqual(got, [0, 1, 2, 3, 6, 7, 8, 10]);
    for (const g of got) assert.equal(typeof g, 'number');
    assert.equal(sink.errorCount, 0);
  });

  it('works for the PY2024 → PY2025 edition with a 2024 build', async () => {
    const rows = [xRow(2024, { source: '55555TX0050001', target: '55555TX0050002', level: '1', reason: '1' })];
    const { result } = await load(toCsv(header(2024), rows), 2024);
    assert.equal(result.sourceYear, 2024);
    assert.equal(result.targetYear, 2025);
    const e = result.plans.get('55555TX0050001')!;
    assert.equal(e.source_year, 2024);
    assert.equal(e.target_year, 2025);
    assert.equal(e.rows[0]!.target_plan_id, '55555TX0050002');
    assert.equal(e.rows[0]!.source_issuer_id, '55555');
  });

  it('fails when the source year of the header is not the build year', async () => {
    const csv = toCsv(header(2025), [xRow(2025, { source: '11111TX0010001', target: '11111TX0010001' })]);
    for (const year of [2024, 2026]) {
      await assert.rejects(load(csv, year), (err: unknown) => {
        assert.ok(err instanceof FatalBuildError);
        assert.equal(err.code, DIAGNOSTIC_CODES.badFormat);
        assert.match(err.message, /plan-id-crosswalk-puf\.csv/);
        assert.match(err.message, /2025/);
        assert.ok(err.message.includes(String(year)));
        return true;
      });
    }
  });

  it('fails on a header without year-suffixed plan columns', async () => {
    const h = header(2025).map((c) => c.replace(/^PlanID_(\d{4})$/, 'PlanID'));
    await assert.rejects(
      load(toCsv(h, []), 2025),
      (err: unknown) => err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.missingColumn,
    );
  });

  it('rejects a bad source plan id with its line and column', async () => {
    const rows = [...filler(2025, 60), xRow(2025, { source: '1111TX0010001', target: '11111TX0010001' }), ...filler(2025, 99).slice(60)];
    const { sink, result, counts } = await load(toCsv(header(2025), rows), 2025);
    assert.equal(counts.rowsRejected, 1);
    assert.equal(counts.rowsRead, 100);
    assert.equal(result.rows, 99);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    assert.equal(d.file, 'plan-id-crosswalk-puf.csv');
    assert.equal(d.line, 62);
    assert.equal(d.column, 3);
    assert.equal(d.columnName, 'PlanID_2025');
    assert.equal(d.value, '1111TX0010001');
  });

  it('rejects a bad target plan id', async () => {
    const rows = [...filler(2025, 99), xRow(2025, { source: '11111TX0010001', target: '11111TX001000' })];
    const { sink } = await load(toCsv(header(2025), rows), 2025);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    assert.equal(d.columnName, 'PlanID_2026');
    assert.equal(d.column, 12);
    assert.equal(d.line, 101);
  });

  it('rejects a blank FIPSCode (it is not a county "00000")', async () => {
    const rows = [...filler(2025, 99), xRow(2025, { source: '11111TX0010001', target: '11111TX0010001', fips: '' })];
    const { sink, result, counts } = await load(toCsv(header(2025), rows), 2025);
    assert.equal(result.plans.get('11111TX0010001')?.rows[0]?.county_fips, undefined, 'blank FIPSCode stored as county 00000');
    assert.equal(counts.rowsRejected, 1);
    assert.equal(sink.kept.find((k) => k.severity === 'error')?.columnName, 'FIPSCode');
  });

  it('rejects a blank CrosswalkLevel, as it rejects a blank ReasonForCrosswalk', async () => {
    const blankReason = await load(
      toCsv(header(2025), [...filler(2025, 99), xRow(2025, { source: '11111TX0010001', target: '11111TX0010001', reason: '' })]),
      2025,
    );
    assert.equal(blankReason.counts.rowsRejected, 1);
    const rows = [...filler(2025, 99), xRow(2025, { source: '11111TX0010001', target: '11111TX0010001', level: '' })];
    const { sink, result, counts } = await load(toCsv(header(2025), rows), 2025);
    assert.equal(
      result.plans.get('11111TX0010001')?.rows[0]?.crosswalk_level,
      undefined,
      'blank CrosswalkLevel stored as level 0 (same plan id)',
    );
    assert.equal(counts.rowsRejected, 1);
    assert.equal(sink.kept.find((k) => k.severity === 'error')?.columnName, 'CrosswalkLevel');
  });

  it('fails when more than 1 % of the rows are rejected', async () => {
    const rows = [
      ...filler(2025, 98),
      xRow(2025, { source: 'bad', target: '11111TX0010001' }),
      xRow(2025, { source: '11111TX0010001', target: '11111TX0010001', reason: 'x' }),
    ];
    await assert.rejects(
      load(toCsv(header(2025), rows), 2025),
      (err: unknown) => err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.tooManyRejected,
    );
  });
});
