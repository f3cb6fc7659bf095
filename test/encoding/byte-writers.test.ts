/**
 * The request path's hand-written encoders against the built-ins they stand in for: each must produce
 * exactly what the built-in would (a response, ETag or cursor is byte-identical either way).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryPairs } from '../../src/encoding/query-string.ts';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { writeCents } from '../../src/encoding/cents-text.ts';
import { fastHash } from '../../src/encoding/fast-hash.ts';
import { jsonString } from '../../src/encoding/json-string.ts';

describe('ByteWriter.exactView', () => {
  it('views exactly what was written, keeps one view per length up to its bound, and then makes one per call', () => {
    const w = new ByteWriter(8, 3);
    const kept = new Map<number, Buffer>();
    for (let round = 0; round < 2; round++) {
      for (let n = 1; n <= 5; n++) {
        w.reset();
        for (let i = 0; i < n; i++) w.byte(97 + ((i + round) % 26));
        const v = w.exactView();
        assert.equal(v.toString('latin1'), 'abcdefgh'.slice(round, round + n));
        if (round === 0) kept.set(n, v);
        // Lengths 1-3 are kept (the same view each time), 4 and 5 are past the bound.
        else assert.equal(v === kept.get(n), n <= 3, `length ${n}`);
      }
    }
  });

  it('starts again when its buffer grows (old views would show the old buffer)', () => {
    const w = new ByteWriter(4);
    w.latin1('abc');
    const before = w.exactView();
    w.reset();
    w.latin1('xyzxyzxyz');
    w.reset();
    w.latin1('def');
    const after = w.exactView();
    assert.notEqual(after, before);
    assert.equal(after.toString('latin1'), 'def');
  });
});

describe('writeCents', () => {
  it('writes what String(cents / 100) writes, for every amount up to $2,000 and a sweep beyond', () => {
    const buf = Buffer.alloc(32);
    const check = (cents: number): void => {
      const end = writeCents(buf, 3, cents);
      assert.equal(buf.toString('latin1', 3, end), String(cents / 100), `cents ${cents}`);
    };
    for (let c = 0; c <= 200_000; c++) check(c);
    for (let c = 200_000; c < 2_000_000_000; c += 999_983) check(c);
    for (const c of [100, 1000, 1_000_000, 99_999_999, 2_147_483_647]) check(c);
  });
});

describe('queryPairs', () => {
  it('splits like URLSearchParams, including empty segments, bare keys and extra equals signs', () => {
    for (const raw of ['', 'a', 'a=', '=a', '=', '&', 'a=1&b=2', '&&a=1&&', 'a==b', 'a=1&a=2', 'a&b=', 'zip=77002&age=40&sort_by=name']) {
      assert.deepEqual(queryPairs(raw), [...new URLSearchParams(raw)], JSON.stringify(raw));
    }
  });

  it('decodes escapes and plus signs exactly as URLSearchParams does', () => {
    for (const raw of ['x=%20y', 'x=a+b', 'a%3Db=c', 'county=Do%C3%B1a+Ana', 'bad=%ZZ', 'x=%E2%82']) {
      assert.deepEqual(queryPairs(raw), [...new URLSearchParams(raw)], raw);
    }
  });
});

describe('jsonString', () => {
  it('quotes like JSON.stringify, escapes included', () => {
    for (const s of [
      '',
      'plain',
      'Imperial "Preferred"',
      'back\\slash',
      'tab\there',
      '\u0000\u001f',
      'é ü 中',
      '\u2028',
      '\ud800 lone',
      '😀 pair',
    ]) {
      assert.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s));
    }
  });
});

describe('ByteWriter.jsonString and jsonContent', () => {
  it('write what JSON.stringify writes, after other bytes, for escaped, non-ASCII and long texts', () => {
    const edges = [' ', '~', '\u001f', '\u007f', '"', '\\', 'é', '\u2028', '\ud800', '😀'];
    const texts = ['', 'plain', 'Rating Area 7', 'Doña Ana', 'Imperial "Preferred"', 'tab\there', 'a'.repeat(95)];
    // Around 32 (texts up to it are copied by a loop) and around 96.
    for (const len of [1, 31, 32, 33, 95, 96, 97, 200]) for (const e of edges) texts.push('x'.repeat(len - 1) + e, e + 'x'.repeat(len - 1));
    for (const e of edges) texts.push(e, `ab${e}cd`);
    // A small buffer, so that growing while writing is covered too.
    const w = new ByteWriter(8);
    for (const s of texts) {
      w.reset();
      w.latin1('[');
      w.jsonString(s);
      w.byte(44);
      w.jsonContent(s);
      w.latin1(']');
      assert.equal(w.buf.toString('utf8', 0, w.at), `[${JSON.stringify(s)},${JSON.stringify(s).slice(1, -1)}]`, JSON.stringify(s));
    }
  });
});

describe('ByteWriter.jsonConstant and latin1', () => {
  it('write what JSON.stringify and Buffer#write write, for recurring texts and past the texts it keeps', () => {
    const w = new ByteWriter(8);
    // 1,100 distinct texts (more than it keeps), each written twice, with escapes and non-ASCII among them.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 1100; i++) {
        const s = i % 3 === 0 ? `Source "${i}"` : i % 3 === 1 ? `Doña Ana ${i}` : `CMS Exchange PUF ${i}`;
        w.reset();
        w.byte(91);
        w.jsonConstant(s);
        w.byte(93);
        assert.equal(w.buf.toString('utf8', 0, w.at), `[${JSON.stringify(s)}]`, s);
      }
    }
    for (const len of [0, 1, 31, 32, 33, 200]) {
      const s = 'zé~'.repeat(70).slice(0, len);
      w.reset();
      w.latin1(s);
      assert.equal(w.buf.toString('latin1', 0, w.at), s, `length ${len}`);
    }
  });
});

describe('fastHash', () => {
  // The previous formulation, with the built-in base-36 conversion: ETags and cursors must not change.
  const reference = (text: string): string => {
    let a = 0x811c9dc5;
    let b = 0x01000193 ^ 0x5bd1e995;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193 + 0x3c6ef372) ^ (b >>> 15);
    }
    return (a >>> 0).toString(36).padStart(7, '0') + (b >>> 0).toString(36).padStart(7, '0');
  };

  it('gives 14 base-36 digits equal to the built-in conversion', () => {
    for (let i = 0; i < 20_000; i++) {
      const text = `searchPlans?age=${i % 66}&zip="${(i * 7919) % 100_000}"&page=${i}`;
      const h = fastHash(text);
      assert.match(h, /^[0-9a-z]{14}$/);
      assert.equal(h, reference(text));
    }
    assert.equal(fastHash(''), reference(''));
  });
});
