/**
 * @module Tests of the streaming CSV parser: RFC 4180 quoting, line endings, physical line numbers, and identical
 * results whatever the chunking, since real inputs arrive in arbitrary stream chunks (file reads, inflate output).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { csvRecords } from '../../../build/read/csv-reader.ts';
import type { CsvRecord } from '../../../build/read/csv-reader.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../../build/read/diagnostics.ts';

async function* from<T>(parts: readonly T[]): AsyncGenerator<T> {
  for (const p of parts) yield p;
}

async function parse(parts: ReadonlyArray<Uint8Array | string>): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  for await (const batch of csvRecords(from(parts))) out.push(...batch);
  return out;
}

/** Records as plain [line, fields] pairs, for deepEqual. */
function plain(records: readonly CsvRecord[]): Array<[number, string[]]> {
  return records.map((r) => [r.line, r.fields]);
}

async function parseText(text: string): Promise<Array<[number, string[]]>> {
  return plain(await parse([Buffer.from(text, 'utf8')]));
}

/**
 * A deliberately naive character-at-a-time parser with the same (lenient) rules, used as the oracle for
 * randomised inputs: it is too simple to share the optimised parser's bugs.
 */
function reference(text: string): Array<[number, string[]]> {
  const out: Array<[number, string[]]> = [];
  let line = 1;
  let i = 0;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  const n = text.length;
  const newline = (): void => {
    if (text[i] === '\r' && text[i + 1] === '\n') i += 2;
    else i += 1;
    line++;
  };
  while (i < n) {
    if (text[i] === '\n' || text[i] === '\r') {
      newline();
      continue;
    }
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    let afterQuote = false;
    for (;;) {
      if (i >= n) {
        if (quoted) throw new Error('unterminated');
        fields.push(field);
        break;
      }
      const c = text[i]!;
      if (quoted) {
        if (c === '"') {
          quoted = false;
          afterQuote = true;
          i++;
        } else {
          if (c === '\r' || (c === '\n' && text[i - 1] !== '\r')) line++;
          field += c;
          i++;
        }
        continue;
      }
      if (c === '"' && afterQuote) {
        field += '"';
        quoted = true;
        afterQuote = false;
        i++;
        continue;
      }
      afterQuote = false;
      const atFieldStart = i === 0 || ',\n\r\uFEFF'.includes(text[i - 1]!);
      if (c === '"' && field === '' && atFieldStart) {
        quoted = true;
        i++;
        continue;
      }
      if (c === ',') {
        fields.push(field);
        field = '';
        i++;
        continue;
      }
      if (c === '\n' || c === '\r') {
        fields.push(field);
        newline();
        break;
      }
      field += c;
      i++;
    }
    out.push([start, fields]);
  }
  return out;
}

describe('csvRecords', () => {
  it('parses quoted commas, doubled quotes and newlines, with physical line numbers', async () => {
    const csv = 'a,b,c\n1,"x, y","say ""hi"""\n2,"multi\nline\nvalue",z\n3,,\n';
    assert.deepEqual(await parseText(csv), [
      [1, ['a', 'b', 'c']],
      [2, ['1', 'x, y', 'say "hi"']],
      [3, ['2', 'multi\nline\nvalue', 'z']],
      [6, ['3', '', '']],
    ]);
  });

  it('accepts CRLF, LF and lone CR alike, and keeps newlines inside quotes raw', async () => {
    const lf = 'h1,h2\n"a\nb",c\nd,e\n';
    const crlf = 'h1,h2\r\n"a\r\nb",c\r\nd,e\r\n';
    const cr = 'h1,h2\r"a\rb",c\rd,e\r';
    assert.deepEqual(await parseText(lf), [
      [1, ['h1', 'h2']],
      [2, ['a\nb', 'c']],
      [4, ['d', 'e']],
    ]);
    assert.deepEqual(await parseText(crlf), [
      [1, ['h1', 'h2']],
      [2, ['a\r\nb', 'c']],
      [4, ['d', 'e']],
    ]);
    assert.deepEqual(await parseText(cr), [
      [1, ['h1', 'h2']],
      [2, ['a\rb', 'c']],
      [4, ['d', 'e']],
    ]);
  });

  it('skips blank lines but counts them', async () => {
    const csv = '\n\r\nh\r\n\r\n\nx\r\r\ny\n\n';
    assert.deepEqual(await parseText(csv), [
      [3, ['h']],
      [6, ['x']],
      [8, ['y']],
    ]);
  });

  it('strips a leading BOM from bytes and from strings, and only at the start', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Id,Name\r\n1,\uFEFFx\r\n')]);
    assert.deepEqual(plain(await parse([bytes])), [
      [1, ['Id', 'Name']],
      [2, ['1', '\uFEFFx']],
    ]);
    assert.deepEqual(plain(await parse(['\uFEFFId,Name\n'])), [[1, ['Id', 'Name']]]);
    // A BOM split over two byte chunks.
    assert.deepEqual(plain(await parse([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])), [
      [1, ['Id', 'Name']],
      [2, ['1', '\uFEFFx']],
    ]);
  });

  it('emits a last record without a final newline, including an empty last field', async () => {
    assert.deepEqual(await parseText('a,b\r\n1,2'), [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ]);
    assert.deepEqual(await parseText('a,b\n1,'), [
      [1, ['a', 'b']],
      [2, ['1', '']],
    ]);
    assert.deepEqual(await parseText('a,b\n1,"q"'), [
      [1, ['a', 'b']],
      [2, ['1', 'q']],
    ]);
    assert.deepEqual(await parseText('a\n""'), [
      [1, ['a']],
      [2, ['']],
    ]);
  });

  it('returns fields raw, not trimmed', async () => {
    assert.deepEqual(await parseText(' a , b \n"$9,100 ", x\n'), [
      [1, [' a ', ' b ']],
      [2, ['$9,100 ', ' x']],
    ]);
  });

  it('is lenient with quotes inside unquoted fields and text after a closing quote', async () => {
    assert.deepEqual(await parseText('a"b,c\n"x" ,y\n"p"q"r",s\n'), [
      [1, ['a"b', 'c']],
      [2, ['x ', 'y']],
      [3, ['pq"r"', 's']],
    ]);
  });

  it('throws FatalBuildError(badFormat) for an unterminated quoted field, naming its line', async () => {
    await assert.rejects(parse(['h\nok\n"never\nclosed\n']), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.badFormat);
      assert.equal(err.message, 'unterminated quoted field starting at line 3');
      return true;
    });
    await assert.rejects(parse(['a,"b', 'c']), /unterminated quoted field starting at line 1/);
  });

  it('yields one batch per chunk that completes records, skipping empty ones', async () => {
    const batches: number[] = [];
    for await (const b of csvRecords(from(['a,b\n1,', '2\n3,4\n', '5,', '6', '\n']))) batches.push(b.length);
    assert.deepEqual(batches, [1, 2, 1]);
  });

  const tricky =
    '\uFEFFId,Name,Note\r\n' +
    '1,"Smith, John","He said ""héllo"""\r\n' +
    '2,Zoë €,"multi\r\nline 𝄞"\r\n' +
    '\r\n' +
    '3,"",""""\n' +
    '4,"a\rb",\r' +
    '5,x,y';

  it('gives the same result for a split at every byte offset (CRLF, "", multibyte UTF-8)', async () => {
    const bytes = Buffer.from(tricky, 'utf8');
    const whole = plain(await parse([bytes]));
    assert.equal(whole.length, 6);
    assert.deepEqual(whole[2], [3, ['2', 'Zoë €', 'multi\r\nline 𝄞']]);
    assert.deepEqual(whole[3], [6, ['3', '', '"']]);
    assert.deepEqual(whole[5], [9, ['5', 'x', 'y']]);
    for (let k = 0; k <= bytes.length; k++) {
      const split = plain(await parse([bytes.subarray(0, k), bytes.subarray(k)]));
      assert.deepEqual(split, whole, `split at byte ${k}`);
    }
    // Three pieces at every pair of offsets, and one byte per chunk.
    for (let a = 1; a < bytes.length; a += 3) {
      for (let b = a; b < bytes.length; b += 2) {
        const split = plain(await parse([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]));
        assert.deepEqual(split, whole, `split at bytes ${a} and ${b}`);
      }
    }
    const single = [...bytes].map((b) => Uint8Array.of(b));
    assert.deepEqual(plain(await parse(single)), whole);
  });

  it('gives the same result for string chunks split at every character, even inside a surrogate pair', async () => {
    const whole = plain(await parse([tricky]));
    assert.deepEqual(whole, plain(await parse([Buffer.from(tricky, 'utf8')])));
    for (let k = 0; k <= tricky.length; k++) {
      assert.deepEqual(plain(await parse([tricky.slice(0, k), tricky.slice(k)])), whole, `split at char ${k}`);
    }
  });

  it('agrees with a naive reference parser on random CSV in random chunks', async () => {
    let seed = 12345;
    const rand = (m: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % m;
    };
    const pieces = ['a', 'bc', ' ', ',', ',', '"', '""', '\n', '\r\n', '\r', 'é', '€', '𝄞', 'xyz', '12'];
    for (let round = 0; round < 300; round++) {
      // Build records from well-formed fields so that the text always has a defined meaning.
      const lines: string[] = [];
      const records = 1 + rand(6);
      for (let r = 0; r < records; r++) {
        const fields: string[] = [];
        const count = 1 + rand(5);
        for (let f = 0; f < count; f++) {
          let v = '';
          const len = rand(5);
          for (let c = 0; c < len; c++) v += pieces[rand(pieces.length)];
          const needsQuotes = /[",\r\n]/.test(v) || rand(4) === 0;
          fields.push(needsQuotes ? `"${v.replaceAll('"', '""')}"` : v);
        }
        lines.push(fields.join(','));
      }
      const eol = ['\n', '\r\n', '\r'][rand(3)]!;
      const text = lines.join(eol) + (rand(2) === 0 ? eol : '');
      const expected = reference(text);
      const bytes = Buffer.from(text, 'utf8');
      const cuts = [0, bytes.length];
      for (let c = rand(6); c > 0; c--) cuts.push(rand(bytes.length + 1));
      cuts.sort((x, y) => x - y);
      const parts = cuts.slice(1).map((end, k) => bytes.subarray(cuts[k], end));
      assert.deepEqual(plain(await parse(parts)), expected, JSON.stringify(text));
    }
  });

  it('cuts a huge string chunk into several batches without changing the records', async () => {
    const row = `${'x'.repeat(100)},"quoted, with comma"\n`;
    const text = `h1,h2\n${row.repeat(5000)}`;
    const batches: CsvRecord[][] = [];
    for await (const b of csvRecords(from([text]))) batches.push(b);
    assert.ok(batches.length > 1, 'a 600 KB chunk gives more than one batch');
    const all = batches.flat();
    assert.equal(all.length, 5001);
    assert.ok(all.every((r, k) => r.line === k + 1 && r.fields.length === 2));
    assert.equal(all[4321]!.fields[1], 'quoted, with comma');
  });

  it('reads the PY2026 business rules sample (quoted field with commas, LF)', async () => {
    const records = await parse([fs.readFileSync('/work/shared/data/cms/py2026-samples/business-rules-puf.sample.csv')]);
    assert.equal(records[0]!.fields.length, 16);
    assert.equal(records[0]!.fields[13], 'CohabitationRule');
    assert.equal(records.length, 9);
    for (const r of records) assert.equal(r.fields.length, 16, `line ${r.line}`);
    assert.match(records[1]!.fields[13]!, /^Child,No;Foster Child,No;/);
  });
});
