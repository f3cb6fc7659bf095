/**
 * @module Every command that takes a plan year takes the years with a rules table and no other: a year
 * after the last table is a usage mistake (exit 2, one line naming the tables), not a build that fails
 * later or a build the API then refuses to serve. The range is read from data/rules, as the API's is.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { P } from '../../src/operations/shared-schemas.ts';
import { availableRuleYears } from '../../src/engine/rules.ts';
import { runHpd } from '../helpers/run-hpd.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const YEARS = availableRuleYears();
const FIRST = YEARS[0]!;
const LAST = YEARS.at(-1)!;

test("the API takes the public API's plan years, and every year with a rules table lies inside them", () => {
  assert.deepEqual([P.year.minimum, P.year.maximum], [2014, 2030]);
  assert.ok(FIRST >= 2014 && LAST <= 2030, `rules tables ${FIRST}–${LAST}`);
});

for (const [what, args] of [
  ['hpd build', (y: number) => ['build', '--year', String(y), '--offline']],
  ['hpd sources init', (y: number, dir: string) => ['sources', 'init', '--year', String(y), '--dir', join(dir, 'sources')]],
  ['hpd verify', (y: number) => ['verify', '--year', String(y)]],
  ['hpd builds use', (y: number) => ['builds', 'use', String(y), 'abcd']],
] as const) {
  test(`${what}: a year before the first rules table or after the last is a usage mistake naming the range`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-plan-year-'));
    try {
      // Nothing may be read or written on the way to the refusal: every path points into an empty directory.
      const env = { PATH: process.env.PATH ?? '', HPD_DATA_DIR: join(dir, 'builds'), HPD_CACHE_DIR: join(dir, 'cache') };
      for (const year of [FIRST - 1, LAST + 1]) {
        const r = await runHpd(args(year, dir), { env, cwd: ROOT });
        assert.equal(r.code, 2, `${what} ${year}: ${r.stderr}`);
        assert.ok(r.stderr.includes(`must be a plan year with a rules table in data/rules (${FIRST}–${LAST}), got "${year}"`), r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
