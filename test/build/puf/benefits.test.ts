/**
 * @module Tests of the Benefits and Cost Sharing PUF loader: the cost-sharing string parser on the spellings of
 * shared/data/README.md §7.2, and the loader on a file written here with the official 24-column header.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadBenefits, OOP_BENEFITS, parseCostSharing } from '../../../build/puf/benefits.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';

const HEADER =
  'BusinessYear,StateCode,IssuerId,SourceName,ImportDate,StandardComponentId,PlanId,BenefitName,CopayInnTier1,CopayInnTier2,CopayOutofNet,CoinsInnTier1,CoinsInnTier2,CoinsOutofNet,IsEHB,IsCovered,QuantLimitOnSvc,LimitQty,LimitUnit,Exclusions,Explanation,EHBVarReason,IsExclFromInnMOOP,IsExclFromOonMOOP'.split(
    ',',
  );

describe('parseCostSharing', () => {
  it('"$30.00" copay', () => {
    assert.deepEqual(parseCostSharing('$30.00', 'Not Applicable', 'Covered'), {
      covered: true,
      copay: 30,
      coinsurance: null,
      after_deductible: false,
      no_charge: false,
    });
  });

  it('"$30 Copay after deductible"', () => {
    assert.deepEqual(parseCostSharing('$30 Copay after deductible', 'Not Applicable', 'Covered'), {
      covered: true,
      copay: 30,
      coinsurance: null,
      after_deductible: true,
      no_charge: false,
    });
  });

  it('"$1,250.50 Copay with deductible" keeps thousands and cents', () => {
    const c = parseCostSharing('$1,250.50 Copay with deductible', 'Not Applicable', 'Covered');
    assert.equal(c.copay, 1250.5);
    assert.equal(c.after_deductible, false);
  });

  it('"No Charge" for both', () => {
    assert.deepEqual(parseCostSharing('No Charge', 'No Charge', 'Covered'), {
      covered: true,
      copay: null,
      coinsurance: null,
      after_deductible: false,
      no_charge: true,
    });
    assert.equal(parseCostSharing('No Charge', 'Not Applicable', 'Covered').no_charge, true);
    assert.equal(parseCostSharing('No Charge', '', 'Covered').no_charge, true);
  });

  it('"No Charge after deductible"', () => {
    const c = parseCostSharing('No Charge after deductible', 'No Charge after deductible', 'Covered');
    assert.equal(c.no_charge, true);
    assert.equal(c.after_deductible, true);
    assert.equal(c.copay, null);
    assert.equal(c.coinsurance, null);
  });

  it('"20.00% Coinsurance after deductible"', () => {
    assert.deepEqual(parseCostSharing('No Charge', '20.00% Coinsurance after deductible', 'Covered'), {
      covered: true,
      copay: null,
      coinsurance: 0.2,
      after_deductible: true,
      no_charge: false,
    });
    assert.equal(parseCostSharing('Not Applicable', '35.00%', 'Covered').coinsurance, 0.35);
    assert.equal(parseCostSharing('Not Applicable', '0.00%', 'Covered').coinsurance, 0);
  });

  it('copay and coinsurance together', () => {
    const c = parseCostSharing('$250.00 Copay after deductible', '10.00% Coinsurance after deductible', 'Covered');
    assert.equal(c.copay, 250);
    assert.equal(c.coinsurance, 0.1);
    assert.equal(c.after_deductible, true);
  });

  it('"Not Applicable" for both', () => {
    assert.deepEqual(parseCostSharing('Not Applicable', 'Not Applicable', 'Covered'), {
      covered: true,
      copay: null,
      coinsurance: null,
      after_deductible: false,
      no_charge: false,
    });
  });

  it('"Not Covered"', () => {
    const c = parseCostSharing('', '', 'Not Covered');
    assert.equal(c.covered, false);
    assert.equal(c.copay, null);
    assert.equal(c.coinsurance, null);
    assert.equal(parseCostSharing('Not Applicable', 'Not Applicable', 'not covered').covered, false);
    // A blank IsCovered is read as covered.
    assert.equal(parseCostSharing('$10.00', '', '').covered, true);
  });
});

type Row = Record<string, string>;

function benefitRow(planId: string, benefit: string, over: Row = {}): Row {
  return {
    BusinessYear: '2025',
    StateCode: 'TX',
    IssuerId: planId.slice(0, 5),
    SourceName: 'HIOS',
    ImportDate: '2024-10-01 10:00:00',
    StandardComponentId: planId.slice(0, 14),
    PlanId: planId,
    BenefitName: benefit,
    CopayInnTier1: '$30.00',
    CopayInnTier2: '',
    CopayOutofNet: 'Not Applicable',
    CoinsInnTier1: 'Not Applicable',
    CoinsInnTier2: '',
    CoinsOutofNet: '50.00%',
    IsEHB: 'Yes',
    IsCovered: 'Covered',
    QuantLimitOnSvc: 'No',
    Exclusions: 'None, see policy',
    Explanation: 'Line one\nline two',
    IsExclFromInnMOOP: 'No',
    IsExclFromOonMOOP: 'Yes',
    ...over,
  };
}

const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const toCsv = (rows: readonly Row[], header: readonly string[] = HEADER): string =>
  `${[header.join(','), ...rows.map((r) => header.map((c) => csvField(r[c] ?? '')).join(','))].join('\r\n')}\r\n`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-benefits-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

async function load(rows: readonly Row[], variants: ReadonlySet<string>, header?: readonly string[]) {
  const file = path.join(dir, `b-${++serial}.csv`);
  fs.writeFileSync(file, toCsv(rows, header));
  const sink = new DiagnosticSink();
  const table = await openTable(file, 'benefits.csv');
  const result = await loadBenefits(table, 2025, variants, sink, createProgress({ tty: false, quiet: true }));
  return { sink, result, counts: sink.files.get('benefits.csv')! };
}

const V1 = '12345TX0010001-01';
const V2 = '12345TX0010001-06';
const UNKNOWN = '99999TX0090001-01';

describe('loadBenefits', () => {
  it('keeps only the OOP services of known variants', async () => {
    const rows = [
      benefitRow(V1, OOP_BENEFITS.primary_care),
      benefitRow(V1, OOP_BENEFITS.specialist, { CopayInnTier1: '$60 Copay after deductible' }),
      benefitRow(V1, OOP_BENEFITS.generic_drugs, { CopayInnTier1: 'No Charge', CoinsInnTier1: 'No Charge' }),
      benefitRow(V1, OOP_BENEFITS.inpatient, { CopayInnTier1: 'Not Applicable', CoinsInnTier1: '20.00% Coinsurance after deductible' }),
      benefitRow(V1, 'Dental Check-Up for Children'), // not an OOP service
      benefitRow(V1, 'Acupuncture', { IsCovered: 'Not Covered' }),
      benefitRow(V2, 'specialist visit', { CopayInnTier1: '$10.00' }), // name matched case-insensitively
      benefitRow(V2, OOP_BENEFITS.imaging, { IsCovered: 'Not Covered', CopayInnTier1: '', CoinsInnTier1: '' }),
      benefitRow(UNKNOWN, OOP_BENEFITS.primary_care), // variant not in the build
      benefitRow('12345TX0010001-00', OOP_BENEFITS.primary_care), // another variant of a known plan
    ];
    const { result, counts, sink } = await load(rows, new Set([V1, V2]));
    assert.deepEqual([...result.keys()].sort(), [V1, V2]);
    const b1 = result.get(V1)!;
    assert.deepEqual(Object.keys(b1).sort(), ['generic_drugs', 'inpatient', 'primary_care', 'specialist']);
    assert.deepEqual(b1.primary_care, { covered: true, copay: 30, coinsurance: null, after_deductible: false, no_charge: false });
    assert.deepEqual(b1.specialist, { covered: true, copay: 60, coinsurance: null, after_deductible: true, no_charge: false });
    assert.equal(b1.generic_drugs?.no_charge, true);
    assert.equal(b1.inpatient?.coinsurance, 0.2);
    assert.equal(b1.inpatient?.after_deductible, true);
    const b2 = result.get(V2)!;
    assert.deepEqual(Object.keys(b2).sort(), ['imaging', 'specialist']);
    assert.equal(b2.specialist?.copay, 10);
    assert.equal(b2.imaging?.covered, false);
    assert.deepEqual(counts, { rowsRead: 10, rowsRejected: 0, rowsIgnored: 4 });
    assert.equal(sink.warningCount, 0);
  });

  it('maps every OOP service by its CMS benefit name', async () => {
    const rows = Object.values(OOP_BENEFITS).map((name) => benefitRow(V1, name));
    const { result } = await load(rows, new Set([V1]));
    assert.deepEqual(Object.keys(result.get(V1)!).sort(), Object.keys(OOP_BENEFITS).sort());
  });

  it('rejects rows of another BusinessYear', async () => {
    const rows = [
      ...Array.from({ length: 99 }, () => benefitRow(V1, OOP_BENEFITS.primary_care)),
      benefitRow(V1, OOP_BENEFITS.specialist, { BusinessYear: '2024' }),
    ];
    const { sink, counts, result } = await load(rows, new Set([V1]));
    assert.equal(counts.rowsRejected, 1);
    const d = sink.kept.find((k) => k.severity === 'error')!;
    // Every row spans two physical lines (Explanation holds a line break): the 100th row starts on line 200.
    assert.equal(d.line, 200);
    assert.equal(d.column, 1);
    assert.equal(d.columnName, 'BusinessYear');
    assert.equal(d.value, '2024');
    assert.equal(result.get(V1)?.specialist, undefined);
  });

  it('fails on missing required columns', async () => {
    const header = HEADER.filter((h) => h !== 'BenefitName');
    await assert.rejects(load([benefitRow(V1, OOP_BENEFITS.primary_care)], new Set([V1]), header), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.missingColumn);
      assert.match(err.message, /benefits\.csv:1: .*BenefitName/);
      return true;
    });
  });
});
