/**
 * src/http/query-echo.ts: one pass writes the echo of a query and of subsets of its names, each the
 * text echoQuery (operation.ts) makes for that order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { echoMembers, writeEchoes } from '../../src/http/query-echo.ts';
import { echoQuery } from '../../src/operations/operation.ts';

// page first: a name only some echoes take comes before the ones they all take.
const ORDER = ['page', 'zip', 'age', 'metal_level', 'sort_by', 'cursor'];
const REST = ORDER.filter((k) => k !== 'page' && k !== 'cursor');
const STATS = ['zip', 'age', 'metal_level'];

describe('writeEchoes', () => {
  for (const given of [
    { zip: '77002', age: '40' },
    { zip: '77002', age: '40', page: '2', sort_by: 'name' },
    { page: '3' },
    { zip: '10001', age: '21', metal_level: 'silver,gold', cursor: 'AbC-_9' },
    { zip: '10001', age: '21', metal_level: 'a b&c=d/é' },
    {},
  ]) {
    it(`writes each echo as echoQuery does: ${JSON.stringify(given)}`, () => {
      const raw = new Map(Object.entries(given));
      const writers = [new ByteWriter(64), new ByteWriter(64), new ByteWriter(64)];
      const bits = writeEchoes(writers, ORDER, echoMembers(ORDER, [ORDER, REST, STATS]), raw);
      [ORDER, REST, STATS].forEach((order, j) => {
        const expected = echoQuery(order, raw);
        assert.equal(writers[j]!.view().toString('latin1'), expected, `echo ${j}`);
        assert.equal((bits & (1 << j)) !== 0, expected !== '', `bit ${j}`);
      });
    });
  }

  it('without a membership, writes the whole echo into every writer', () => {
    const raw = new Map(Object.entries({ page: '2', zip: '77002', age: '40' }));
    const writers = [new ByteWriter(64), new ByteWriter(64)];
    assert.equal(writeEchoes(writers, ORDER, null, raw), 0b11);
    for (const w of writers) assert.equal(w.view().toString('latin1'), echoQuery(ORDER, raw));
  });

  it('refuses more writers than its bits can name', () => {
    assert.throws(() => echoMembers(ORDER, Array(9).fill(ORDER)), /at most 8 echoes/);
  });
});
