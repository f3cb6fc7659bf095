/**
 * The dataset's derived list columns (per-entry plan codes, band-major premiums, name keys) against
 * the accessors they are derived from: search reads only the columns, so any disagreement would show
 * as wrong filters or premiums.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture } from '../helpers/fixture-build.ts';
import { openCurrentDataset, type Dataset } from '../../src/engine/dataset.ts';
import { AGE_BAND_COUNT, bandAge } from '../../src/engine/age-bands.ts';
import { METAL_CODES, PLAN_TYPE_CODES } from '../../src/engine/build-format.ts';

describe('list columns', () => {
  let dir: string;
  let ds: Dataset;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-columns-'));
    ds = openCurrentDataset(await buildFixture(dir), 2025);
  });
  after(() => {
    ds.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every list entry carries its plan codes and its premium at every age band', () => {
    const c = ds.columns;
    const lists = c.listStart.length - 1;
    assert.ok(lists > 0 && c.entryCount === c.entryPlan.length && c.entryCount > 0);
    let priced = 0;
    for (let l = 0; l < lists; l++) {
      for (let pos = 0; pos < ds.listSize(l); pos++) {
        const e = c.listStart[l]! + pos;
        const plan = ds.plan(ds.listPlan(l, pos));
        assert.equal(METAL_CODES[c.entryMetal[e]!], plan.metal);
        assert.equal(PLAN_TYPE_CODES[c.entryType[e]!], plan.planType);
        assert.equal(c.entryFlags[e], plan.flags);
        for (let b = 0; b < AGE_BAND_COUNT; b++) {
          const cents = c.entryCents[b * c.entryCount + e]!;
          assert.equal(cents, ds.listPremiumCents(l, pos, bandAge(b)), `list ${l} position ${pos} band ${b}`);
          if (cents > 0) priced++;
        }
      }
    }
    assert.ok(priced > 0, 'the fixture prices some plans');
  });

  test('name keys are equal exactly when the lower-cased names are', () => {
    const byKey = new Map<number, string>();
    for (let i = 0; i < ds.planCount; i++) {
      const name = ds.plan(i).name.toLowerCase();
      const key = ds.columns.nameKey[i]!;
      const seen = byKey.get(key);
      if (seen === undefined) byKey.set(key, name);
      else assert.equal(seen, name);
    }
    assert.equal(new Set(byKey.values()).size, byKey.size);
  });
});
