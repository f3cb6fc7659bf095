/**
 * @module Tests of the minimal ZIP reader against archives written here byte by byte, so that each layout the
 * reader claims to support (stored, deflated, data descriptors, ZIP64, comments) and each refusal is exercised
 * without committing binary fixtures; plus the two real CMS archives.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../../build/read/diagnostics.ts';
import { openZipCsv } from '../../../build/read/zip-entry.ts';
import { makeZip, type Member, type ZipOptions } from '../../helpers/zip-writer.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-zip-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

function writeZip(members: readonly Member[], options?: ZipOptions): string {
  const file = path.join(dir, `t${++serial}.zip`);
  fs.writeFileSync(file, makeZip(members, options));
  return file;
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

function badFormat(pattern: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof FatalBuildError, `expected FatalBuildError, got ${String(err)}`);
    assert.equal(err.code, DIAGNOSTIC_CODES.badFormat);
    assert.match(err.message, pattern);
    return true;
  };
}

const csv = Buffer.from('\uFEFFId,Name\r\n1,"Zoë, A"\r\n'.repeat(1) + '2,b\r\n'.repeat(2000), 'utf8');

describe('openZipCsv', () => {
  it('opens the one CSV among a directory, a __MACOSX fork, a stored and a deflated member', async () => {
    const readme = Buffer.from('read me');
    const file = writeZip([
      { name: 'data/' },
      { name: 'data/README.txt', data: readme, method: 0 },
      { name: '__MACOSX/data/._Plan_Attributes_PUF.csv', data: Buffer.from('junk'), method: 0 },
      { name: 'data/Plan_Attributes_PUF.csv', data: csv, method: 8 },
    ]);
    const z = await openZipCsv(file);
    assert.equal(z.memberName, 'data/Plan_Attributes_PUF.csv');
    assert.equal(z.uncompressedSize, csv.length);
    assert.ok(z.compressedSize < csv.length);
    assert.deepEqual(await readAll(z.stream), csv);
  });

  it('reads a stored member', async () => {
    const file = writeZip([{ name: 'plan-attributes-puf.CSV', data: csv, method: 0 }]);
    const z = await openZipCsv(file);
    assert.equal(z.memberName, 'plan-attributes-puf.CSV');
    assert.equal(z.compressedSize, csv.length);
    assert.deepEqual(await readAll(z.stream), csv);
  });

  it('reads an empty stored member', async () => {
    const z = await openZipCsv(writeZip([{ name: 'empty.csv', method: 0 }]));
    assert.equal(z.uncompressedSize, 0);
    assert.equal((await readAll(z.stream)).length, 0);
  });

  it('uses central-directory sizes when the local header defers them to a data descriptor', async () => {
    const z = await openZipCsv(writeZip([{ name: 'a.csv', data: csv, method: 8, dataDescriptor: true }]));
    assert.deepEqual(await readAll(z.stream), csv);
  });

  it('reads ZIP64 archives (EOCD64, locator and extra fields)', async () => {
    const file = writeZip(
      [
        { name: 'notes.txt', data: Buffer.from('x'), method: 0 },
        { name: 'rates.csv', data: csv, method: 8 },
      ],
      { zip64: true },
    );
    const z = await openZipCsv(file);
    assert.equal(z.memberName, 'rates.csv');
    assert.equal(z.uncompressedSize, csv.length);
    assert.deepEqual(await readAll(z.stream), csv);
  });

  it('finds the end record before an archive comment', async () => {
    const z = await openZipCsv(writeZip([{ name: 'a.csv', data: csv, method: 8 }], { comment: 'PK\u0005\u0006 not a record' }));
    assert.deepEqual(await readAll(z.stream), csv);
  });

  it('rejects an archive with two CSV members, naming both', async () => {
    const file = writeZip([
      { name: 'a.csv', data: csv, method: 8 },
      { name: 'sub/b.csv', data: csv, method: 0 },
    ]);
    await assert.rejects(openZipCsv(file), badFormat(/expected one \.csv member, found 2: a\.csv, sub\/b\.csv/));
  });

  it('rejects an archive without a CSV member, naming what it holds', async () => {
    const file = writeZip([
      { name: 'docs/' },
      { name: 'docs/readme.txt', data: Buffer.from('x') },
      { name: '__MACOSX/x.csv', data: Buffer.from('x') },
    ]);
    await assert.rejects(openZipCsv(file), badFormat(/found none \(members: docs\/readme\.txt\)/));
  });

  it('rejects encrypted members and unsupported methods clearly', async () => {
    await assert.rejects(openZipCsv(writeZip([{ name: 'a.csv', data: csv, flags: 0x0001 }])), badFormat(/a\.csv is encrypted/));
    await assert.rejects(
      openZipCsv(writeZip([{ name: 'a.csv', data: csv, method: 12 }])),
      badFormat(/compression method 12 \(BZIP2\); only stored \(0\) and deflate \(8\)/),
    );
  });

  it('fails the stream on a CRC mismatch, corrupt deflate data or a truncated file', async () => {
    const z = await openZipCsv(writeZip([{ name: 'a.csv', data: csv, method: 8, crc: 12345 }]));
    await assert.rejects(readAll(z.stream), badFormat(/CRC-32 mismatch/));

    const good = makeZip([{ name: 'a.csv', data: csv, method: 8 }]);
    const corrupt = Buffer.from(good);
    // Bytes just after the 30-byte local header and the 5-byte name are deflate block headers.
    corrupt.fill(0xff, 35, 45);
    const file = path.join(dir, 'corrupt.zip');
    fs.writeFileSync(file, corrupt);
    await assert.rejects((async () => readAll((await openZipCsv(file)).stream))(), badFormat(/corrupt deflate data|inflate|CRC|bytes/));

    const truncated = path.join(dir, 'truncated.zip');
    fs.writeFileSync(truncated, good.subarray(0, good.length - 30));
    await assert.rejects(openZipCsv(truncated), badFormat(/not a zip file|truncated/));
  });

  it('rejects a file that is not a zip, and reports a missing file as inputMissing', async () => {
    const notZip = path.join(dir, 'plain.zip');
    fs.writeFileSync(notZip, 'Id,Name\n1,a\n'.repeat(10));
    await assert.rejects(openZipCsv(notZip), badFormat(/not a zip file/));
    await assert.rejects(openZipCsv(path.join(dir, 'absent.zip')), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.inputMissing);
      return true;
    });
  });

  it('lets a consumer stop early', async () => {
    const z = await openZipCsv(writeZip([{ name: 'a.csv', data: Buffer.concat(Array(50).fill(csv)), method: 8 }]));
    for await (const chunk of z.stream) {
      assert.ok(chunk.length > 0);
      break;
    }
  });

  it('opens the real CMS archives, whose member names differ by year', async () => {
    const py2025 = await openZipCsv('/work/shared/data/cms/py2025/plan-attributes-puf.zip');
    assert.equal(py2025.memberName, 'plan-attributes-puf.csv');
    assert.equal(py2025.uncompressedSize, 35_508_418);
    let bytes = 0;
    for await (const c of py2025.stream) bytes += c.length;
    assert.equal(bytes, 35_508_418);

    const py2023 = await openZipCsv('/work/shared/data/cms/py2023/plan-attributes-puf.zip');
    assert.equal(py2023.memberName, 'Plan_Attributes_PUF.csv');
    assert.equal(py2023.uncompressedSize, 47_261_181);
    for await (const c of py2023.stream) {
      assert.ok(c.toString('utf8').startsWith('\uFEFFBusinessYear,StateCode,'));
      break;
    }
  });
});
