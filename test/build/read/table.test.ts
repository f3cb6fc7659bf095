/**
 * @module Tests of header-keyed table access: column lookup independent of order and case, one error listing
 * every missing column, CSV and zip inputs through the same path, and the real CMS and HUD files.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { CsvRecord } from '../../../build/read/csv-reader.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openTable, openTableFromStream } from '../../../build/read/table.ts';
import type { TableReader } from '../../../build/read/table.ts';
import { makeZip } from '../../helpers/zip-writer.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-table-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

async function allRows(t: TableReader): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  for await (const batch of t.rows()) out.push(...batch);
  return out;
}

/** Rows as objects keyed by the given column names, looked up through the header. */
async function byName(t: TableReader, names: readonly string[]): Promise<Array<Record<string, string>>> {
  const idx = names.map((n) => t.column(n));
  return (await allRows(t)).map((r) => Object.fromEntries(names.map((n, k) => [n, r.fields[idx[k]!]!])));
}

describe('openTable', () => {
  it('finds columns by name whatever their order', async () => {
    const a = await openTable(write('a.csv', 'PlanId,StateCode,Rate\n11111AK0010001-00,AK,100\n'));
    const b = await openTable(write('b.csv', 'Rate,PlanId,StateCode\n100,11111AK0010001-00,AK\n'));
    const names = ['StateCode', 'PlanId', 'Rate'];
    const fromB = await byName(b, names);
    assert.deepEqual(await byName(a, names), fromB);
    assert.deepEqual(fromB, [{ StateCode: 'AK', PlanId: '11111AK0010001-00', Rate: '100' }]);
  });

  it('trims header names, drops the BOM, and matches exactly before case-insensitively', async () => {
    const t = await openTable(write('h.csv', '\uFEFFZIP, County ,county,USPS_ZIP_PREF_STATE\r\n01001,25013,x,MA\r\n'));
    assert.deepEqual(t.header, ['ZIP', 'County', 'county', 'USPS_ZIP_PREF_STATE']);
    assert.equal(t.column('ZIP'), 0);
    assert.equal(t.column('County'), 1);
    assert.equal(t.column('county'), 2);
    assert.equal(t.column('COUNTY'), 1);
    assert.equal(t.column('usps_zip_pref_state'), 3);
    assert.equal(t.column('Missing'), -1);
    assert.equal(t.file, 'h.csv');
  });

  it('reports every missing required column in one message on line 1', async () => {
    const t = await openTable(write('plans.csv', 'IssuerId,MetalLevel\n1,Gold\n'));
    t.require(['IssuerId', 'metallevel']);
    assert.throws(
      () => t.require(['PlanId', 'IssuerId', 'StateCode']),
      (err: unknown) => {
        assert.ok(err instanceof FatalBuildError);
        assert.equal(err.code, DIAGNOSTIC_CODES.missingColumn);
        assert.equal(err.message, 'plans.csv:1: missing required column(s) PlanId, StateCode');
        assert.equal(err.diagnostic?.line, 1);
        assert.equal(err.diagnostic?.file, 'plans.csv');
        return true;
      },
    );
  });

  it('yields data records after the header with their physical lines', async () => {
    const t = await openTable(write('l.csv', 'a,b\r\n1,"two\r\nlines"\r\n\r\n3,4'), 'lines');
    assert.equal(t.file, 'lines');
    const rows = await allRows(t);
    assert.deepEqual(
      rows.map((r) => [r.line, r.fields]),
      [
        [2, ['1', 'two\r\nlines']],
        [5, ['3', '4']],
      ],
    );
    await assert.rejects(async () => {
      for await (const _ of t.rows()) break;
    }, /only once/);
  });

  it('accepts a header-only file and rejects an empty one', async () => {
    assert.deepEqual(await allRows(await openTable(write('header-only.csv', 'a,b\n'))), []);
    for (const content of ['', '\uFEFF', '\r\n\n']) {
      await assert.rejects(openTable(write('empty.csv', content)), (err: unknown) => {
        assert.ok(err instanceof FatalBuildError);
        assert.equal(err.code, DIAGNOSTIC_CODES.badFormat);
        assert.match(err.message, /^empty\.csv: empty file/);
        return true;
      });
    }
  });

  it('names the file in parser errors and reports a missing file as inputMissing', async () => {
    const t = await openTable(write('open.csv', 'a,b\n1,"unterminated\n'));
    await assert.rejects(allRows(t), /^FatalBuildError: open\.csv: unterminated quoted field starting at line 2$/);
    await assert.rejects(openTable(path.join(dir, 'nope.csv')), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.inputMissing);
      return true;
    });
  });

  it('reads the CSV inside a zip and reports progress in inflated bytes', async () => {
    const csv = Buffer.from(`\uFEFFPlanId,StateCode\r\n${'X,TX\r\n'.repeat(30000)}`, 'utf8');
    const t = await openTable(write('puf.zip', makeZip([{ name: 'Plan_Attributes_PUF.csv', data: csv, method: 0 }])));
    assert.equal(t.file, 'puf.zip');
    assert.deepEqual(t.header, ['PlanId', 'StateCode']);
    assert.equal(t.progress().bytesTotal, csv.length);
    assert.ok(t.progress().bytesRead > 0);
    const rows = await allRows(t);
    assert.equal(rows.length, 30000);
    assert.deepEqual(t.progress(), { bytesRead: csv.length, bytesTotal: csv.length });
  });

  it('reports progress of a plain file against its size', async () => {
    const content = `a,b\n${'1,2\n'.repeat(50000)}`;
    const t = await openTable(write('p.csv', content));
    assert.equal(t.progress().bytesTotal, content.length);
    await allRows(t);
    assert.equal(t.progress().bytesRead, content.length);
  });

  it('releases the file when closed before the end', async () => {
    const t = await openTable(write('big.csv', `a\n${'x\n'.repeat(200000)}`));
    for await (const batch of t.rows()) {
      assert.ok(batch.length > 0);
      break;
    }
    await t.close();
    const u = await openTable(write('big2.csv', `a\n${'x\n'.repeat(200000)}`));
    await u.close();
  });
});

describe('openTableFromStream', () => {
  it('compiles generated CSV text through the same parser', async () => {
    async function* generated(): AsyncGenerator<string> {
      yield 'Rate , PLANID\n';
      for (let i = 0; i < 3; i++) yield `${i}.5,"P,${i}"\n`;
    }
    const t = await openTableFromStream(generated(), 'generated-rates', 1000);
    assert.equal(t.file, 'generated-rates');
    assert.equal(t.column('PlanId'), 1);
    const rows = await allRows(t);
    assert.deepEqual(
      rows.map((r) => r.fields),
      [
        ['0.5', 'P,0'],
        ['1.5', 'P,1'],
        ['2.5', 'P,2'],
      ],
    );
    assert.deepEqual(t.progress(), { bytesRead: 14 + 3 * 10, bytesTotal: 1000 });
  });

  it('rejects a stream with no header', async () => {
    await assert.rejects(openTableFromStream((async function* (): AsyncGenerator<string> {})(), 'nothing'), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.badFormat);
      assert.equal(err.message, 'nothing: empty file (no header line)');
      return true;
    });
  });
});

describe('real input files', () => {
  it('reads the PY2025 plan attributes zip: 24,527 rows, every one with 151 fields', async () => {
    const t = await openTable('/work/shared/data/cms/py2025/plan-attributes-puf.zip');
    assert.equal(t.header.length, 151);
    assert.equal(t.header[0], 'BusinessYear');
    assert.equal(t.header[150], 'PlanBrochure');
    t.require(['PlanId', 'StateCode', 'TEHBInnTier1IndividualMOOP', 'IssuerMarketPlaceMarketingName']);
    const year = t.column('BusinessYear');
    let rows = 0;
    let lastLine = 0;
    for await (const batch of t.rows()) {
      for (const r of batch) {
        rows++;
        assert.equal(r.fields.length, 151, `line ${r.line}`);
        assert.equal(r.fields[year], '2025', `line ${r.line}`);
        assert.ok(r.line > lastLine);
        lastLine = r.line;
      }
    }
    assert.equal(rows, 24_527);
    assert.deepEqual(t.progress(), { bytesRead: 35_508_418, bytesTotal: 35_508_418 });
  });

  it('reads the PY2023 plan attributes zip: 32,528 rows × 151 fields', async () => {
    const t = await openTable('/work/shared/data/cms/py2023/plan-attributes-puf.zip');
    assert.equal(t.header.length, 151);
    let rows = 0;
    for await (const batch of t.rows()) {
      for (const r of batch) {
        rows++;
        assert.equal(r.fields.length, 151, `line ${r.line}`);
      }
    }
    assert.equal(rows, 32_528);
  });

  it('reads the HUD ZIP-county crosswalk (BOM, CRLF, no final newline): 54,553 rows', async () => {
    const t = await openTable('/work/shared/data/hud/ZIP_COUNTY_122024.csv');
    assert.equal(t.header[0], 'ZIP');
    t.require(['ZIP', 'COUNTY', 'RES_RATIO']);
    const zip = t.column('ZIP');
    let rows = 0;
    let last: CsvRecord | undefined;
    for await (const batch of t.rows()) {
      for (const r of batch) {
        rows++;
        assert.equal(r.fields.length, t.header.length, `line ${r.line}`);
        assert.match(r.fields[zip]!, /^\d{5}$/);
        last = r;
      }
    }
    assert.equal(rows, 54_553);
    assert.equal(last?.line, 54_554);
  });
});
