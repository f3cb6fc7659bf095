/**
 * @module The CMS state-based-exchange PUFs (CT, RI, VT, PY2024) read through the federal loaders by
 * their column dialect: row counts, no rejected row, values normalised, and
 * diagnostics that point at the SBE file's own line and column.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { loadPlanAttributes } from '../../../build/puf/plan-attributes.ts';
import { loadRates } from '../../../build/puf/rates.ts';
import { SBE_PLANS_DIALECT, SBE_RATES_DIALECT, SBE_SERVICE_AREAS_DIALECT } from '../../../build/puf/sbe-dialect.ts';
import { loadServiceAreas, serviceAreaKey } from '../../../build/puf/service-area.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { ageOfTierRow, familyAmount, fractionOfPercent, isoDateOfUs, yesNoOfBoolean } from '../../../build/read/dialect-values.ts';
import { type ColumnDialect, withDialect } from '../../../build/read/dialect.ts';
import { openTable } from '../../../build/read/table.ts';
import { makeZip } from '../../helpers/zip-writer.ts';

const SBE_DIR = fileURLToPath(new URL('../../../../shared/data/cms/sbe-py2024/', import.meta.url));
const progress = createProgress({ tty: false, quiet: true });

async function open(file: string, dialect: ColumnDialect, dir = SBE_DIR) {
  return withDialect(await openTable(path.join(dir, file)), dialect);
}

describe('SBE value spellings, normalised in one place', () => {
  it('rewrites the SBE spellings into the federal ones and leaves anything else for the federal parser', () => {
    assert.equal(yesNoOfBoolean('true'), 'Yes');
    assert.equal(yesNoOfBoolean('FALSE'), 'No');
    assert.equal(yesNoOfBoolean('maybe'), 'maybe');
    assert.equal(isoDateOfUs('02-12-2024'), '2024-02-12');
    assert.equal(isoDateOfUs('2/12/2024'), '2024-02-12');
    assert.equal(isoDateOfUs('2024-01-01'), '2024-01-01');
    assert.equal(fractionOfPercent('99%'), '0.99');
    assert.equal(fractionOfPercent('100%'), '1');
    assert.equal(fractionOfPercent('0.97'), '0.97');
    assert.equal(familyAmount('person')('$6550 per person | $13100 per group'), '$6550 per person');
    assert.equal(familyAmount('group')('$6550 per person | $13100 per group'), '$13100 per group');
    assert.equal(familyAmount('group')('per person not applicable | per group not applicable'), 'per group not applicable');
    const cells = (c: string): string => (c === 'COUPLE' ? '2265.18' : '');
    assert.equal(ageOfTierRow('', cells), 'Family Option');
    assert.equal(
      ageOfTierRow('', () => ''),
      '',
    );
    assert.equal(ageOfTierRow('40', cells), '40');
  });
});

describe('SBE Plans through the Plan Attributes loader', () => {
  const expected = { CT: [82, 71], RI: [119, 87], VT: [131, 104] } as const;
  for (const [state, [rows, variants]] of Object.entries(expected)) {
    it(`${state}: ${rows} rows, ${variants} individual medical variants, none rejected`, async () => {
      const sink = new DiagnosticSink();
      const file = `${state}Plans05102024.csv`;
      const pa = await loadPlanAttributes(await open(file, SBE_PLANS_DIALECT), 2024, sink, progress);
      assert.equal(sink.files.get(file)?.rowsRead, rows);
      assert.equal(sink.files.get(file)?.rowsRejected, 0);
      assert.equal(pa.variants.size, variants);
      assert.equal(pa.newestImport, '2024-02-12');
      // Every value the loader reads parses: no nulled value, no missing optional column.
      assert.deepEqual(sink.kept, []);
      for (const v of pa.variants.values()) assert.equal(v.state, state);
    });
  }

  it('splits the one FAMILY cell into per-person and per-group amounts, and reads 99% as 0.99', async () => {
    const pa = await loadPlanAttributes(await open('CTPlans05102024.csv', SBE_PLANS_DIALECT), 2024, new DiagnosticSink(), progress);
    const withTehb = [...pa.variants.values()].find((v) => v.medical_drug_deductibles_integrated && v.deductible.individual_tier1 === 6550);
    assert.ok(withTehb !== undefined);
    assert.equal(withTehb.deductible.family_per_person_tier1, 6550);
    assert.equal(withTehb.deductible.family_tier1, 13100);
    assert.ok([...pa.variants.values()].some((v) => v.ehb_percent_premium === 0.99));
  });
});

describe('SBE Rates through the Rate PUF loader', () => {
  it('CT: 19,584 rows, quarterly periods other than January out of scope, 8 rating areas, none rejected', async () => {
    const sink = new DiagnosticSink();
    const rates = await loadRates(await open('CTRates05102024.csv', SBE_RATES_DIALECT), 2024, new Set(['76962CT0010001']), sink, progress);
    assert.equal(sink.files.get('CTRates05102024.csv')?.rowsRead, 19584);
    assert.equal(sink.errorCount, 0);
    assert.deepEqual([...(rates.rates.get('76962CT0010001')?.keys() ?? [])].sort(), [1, 2, 3, 4, 5, 6, 7, 8]);
    // The first data row: 0-14 in Rating Area 1 at $381.93.
    assert.equal(rates.rates.get('76962CT0010001')?.get(1)?.[0], 38193);
    assert.equal(rates.newestImport, '2024-02-12');
  });

  it('VT: empty AGE rows are the family-tier rows; the individual rate prices every age (community rating)', async () => {
    const sink = new DiagnosticSink();
    const plan = '13627VT0320001';
    const rates = await loadRates(await open('VTRates05102024.csv', SBE_RATES_DIALECT), 2024, new Set([plan]), sink, progress);
    assert.equal(sink.errorCount, 0);
    const tiers = rates.familyTiers.get(plan)?.get(1);
    assert.equal(tiers?.individual, 1132.59);
    assert.equal(tiers?.couple, 2265.18);
    assert.equal(tiers?.primarySubscriberAndOneDependent, 2185.9);
    assert.equal(tiers?.coupleAndOneDependent, 3182.58);
    assert.deepEqual([...new Set(rates.rates.get(plan)?.get(1) ?? [])], [113259]);
  });
});

describe('SBE Service Areas through the Service Area loader', () => {
  it('CT: COVER ENTIRE STATE true is a whole-state area; dental and SHOP rows are out of scope', async () => {
    const sink = new DiagnosticSink();
    const areas = await loadServiceAreas(await open('CTServiceAreas05102024.csv', SBE_SERVICE_AREAS_DIALECT), 2024, sink, progress);
    assert.equal(sink.files.get('CTServiceAreas05102024.csv')?.rowsRead, 14);
    assert.equal(sink.errorCount, 0);
    assert.equal(areas.get(serviceAreaKey('76962', 'CTS001'))?.coverEntireState, true);
  });

  it('VT: a header and no rows', async () => {
    const sink = new DiagnosticSink();
    const areas = await loadServiceAreas(await open('VTServiceAreas05102024.csv', SBE_SERVICE_AREAS_DIALECT), 2024, sink, progress);
    assert.equal(areas.size, 0);
    assert.equal(sink.files.get('VTServiceAreas05102024.csv')?.rowsRead, 0);
  });
});

describe('diagnostics of a dialect view', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-sbe-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const header = fs.readFileSync(path.join(SBE_DIR, 'CTRates05102024.csv'), 'utf8').split(/\r?\n/)[0]!;

  it("point at the SBE file's own line and column", async () => {
    const row =
      '2024,CT,76962,SERFF,1,02-12-2024,,2024-12-31,2024-01-01,76962CT0010001,"Rating Area X","No Preference",0-14,Both,381.93,,,,,,,,';
    fs.writeFileSync(path.join(dir, 'bad.csv'), `${header}\n${row}\n`);
    const sink = new DiagnosticSink();
    await assert.rejects(
      loadRates(await open('bad.csv', SBE_RATES_DIALECT, dir), 2024, new Set(['76962CT0010001']), sink, progress),
      (err: unknown) => err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.tooManyRejected,
    );
    const d = sink.kept.find((k) => k.columnName === 'RatingAreaId');
    // RATING AREA ID is the 11th column of the SBE file (the federal file has it 9th).
    assert.deepEqual([d?.file, d?.line, d?.column, d?.value], ['bad.csv', 2, 11, 'Rating Area X']);
  });

  it('name a missing column as the SBE file spells it', async () => {
    fs.writeFileSync(path.join(dir, 'no-plan.csv'), `${header.replace('"PLAN ID",', '')}\n`);
    const table = await open('no-plan.csv', SBE_RATES_DIALECT, dir);
    assert.throws(
      () => table.require(['PlanId']),
      (err: unknown) =>
        err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.missingColumn && /PLAN ID \(PlanId\)/.test(err.message),
    );
  });
});

describe('an SBE bundle as the one zip CMS distributes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-sbe-zip-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('each input reads its own member, named by pattern; a pattern matching none is a bad format naming the members', async () => {
    const members = ['RIPlans05102024.csv', 'RIRates05102024.csv', 'RIServiceAreas05102024.csv'].map((name) => ({
      name,
      data: fs.readFileSync(path.join(SBE_DIR, name)),
      method: 8,
    }));
    const zip = path.join(dir, 'RI.zip');
    fs.writeFileSync(zip, makeZip(members));
    const sink = new DiagnosticSink();
    const rates = withDialect(await openTable(zip, 'RI.zip#rates', /^RIRates\d*\.csv$/i), SBE_RATES_DIALECT);
    await loadRates(rates, 2024, new Set(['77514RI0010001']), sink, progress);
    assert.equal(sink.files.get('RI.zip#rates')?.rowsRead, 6222);
    assert.equal(sink.errorCount, 0);
    await assert.rejects(
      openTable(zip, 'RI.zip#x', /^RINetworks\d*\.csv$/i),
      (err: unknown) =>
        err instanceof FatalBuildError && err.code === DIAGNOSTIC_CODES.badFormat && /RIPlans05102024\.csv/.test(err.message),
    );
  });
});
