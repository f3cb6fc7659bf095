/**
 * The live registry: adopts a newly published build of a year, keeps years that did not change, never
 * adopts a build that fails to open (and says why in one line), and closes a retired build on the next
 * turn — its data.mdb is then no longer mapped into the process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, mkdtempSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentHash, switchCurrent } from '../../build/publish.ts';
import { createLiveRegistry } from '../../src/operations/live-registry.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';

const mapped = (file: string): boolean => readFileSync('/proc/self/maps', 'utf8').includes(file);
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('a new current build is adopted, the old one closed on the next turn; a damaged one is refused with one line', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-live-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = await buildFixture(dir);
  const a = currentHash(root, 2025)!;
  const lines: string[] = [];
  const live = createLiveRegistry(root, 'http://api.test', (l) => lines.push(l));
  t.after(() => live.close());
  const swaps: string[] = [];
  live.onSwap((next) => swaps.push(next.builds['2025']!));

  const first = live.current();
  assert.equal(first.builds['2025'], a);
  assert.match(first.get(2025)!.freshness('TX'), /2024-11-20/);
  assert.deepEqual(live.reload(), { adopted: [], refused: [] }, 'nothing published: nothing adopted');
  assert.equal(live.current(), first, 'the same snapshot');

  const b = await buildFixtureVariant(dir, root, '2024-12-01');
  assert.notEqual(b, a);
  const r = live.reload();
  assert.deepEqual(r.adopted, [{ year: 2025, from: a, to: b }]);
  const second = live.current();
  assert.notEqual(second.version, first.version, 'ETags change with the build');
  assert.match(second.get(2025)!.freshness('TX'), /2024-12-01/);
  assert.deepEqual(swaps, [b]);
  // A request that took the old snapshot in this turn still reads it whole.
  assert.ok((first.get(2025)!.ds.resolveZip('77002') ?? []).length > 0);
  assert.ok(mapped(join(root, '2025', a, 'data.mdb')), 'the old build stays open until the turn ends');
  await nextTurn();
  assert.equal(mapped(join(root, '2025', a, 'data.mdb')), false, 'the old build is closed and unmapped');
  assert.ok(mapped(join(root, '2025', b, 'data.mdb')));

  // Roll back to A (still on disk): adopted again.
  switchCurrent(root, 2025, a);
  assert.deepEqual(live.reload().adopted, [{ year: 2025, from: b, to: a }]);

  // A damaged build C is published: refused, A keeps serving.
  const c = await buildFixtureVariant(dir, root, '2024-12-15');
  const tables = join(root, '2025', c, 'tables.bin');
  const fd = openSync(tables, 'r+');
  writeSync(fd, Buffer.from([0xde, 0xad, 0xbe, 0xef]), 0, 4, 4096);
  closeSync(fd);
  const refused = live.reload();
  assert.deepEqual(refused.adopted, []);
  assert.equal(refused.refused.length, 1);
  assert.equal(live.current().builds['2025'], a, 'still serving A');
  const line = lines.at(-1)!;
  assert.match(
    line,
    new RegExp(`^hpd: reload: not adopting 2025/${c.slice(0, 12)}: .*tables\\.bin.*; still serving 2025/${a.slice(0, 12)}$`),
  );
  assert.equal(line.includes('\n'), false);
  assert.ok(readdirSync(join(root, '2025')).includes(c));
});
