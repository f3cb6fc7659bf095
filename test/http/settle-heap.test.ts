import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getHeapStatistics } from 'node:v8';
import { settleHeap } from '../../src/http/settle-heap.ts';

test('settleHeap collects what loading left behind, at once, without exposing gc to the program', () => {
  let garbage: { n: number; s: string }[] | null = [];
  for (let i = 0; i < 500_000; i++) garbage.push({ n: i, s: `row ${i}` });
  const loaded = getHeapStatistics().used_heap_size;
  garbage = null;
  const ms = settleHeap();
  const settled = getHeapStatistics().used_heap_size;
  assert.ok(loaded - settled > 20_000_000, `${loaded} → ${settled} bytes used`);
  assert.ok(ms >= 0);
  assert.equal((globalThis as { gc?: unknown }).gc, undefined);
  settleHeap(); // a second call reuses the collector
});
