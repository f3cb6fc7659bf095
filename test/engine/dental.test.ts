/**
 * @module The dental catalog and search of the engine: the index read from the LMDB
 * `dental-*` databases (a partial county's ZIP list honoured, a build without them empty) and the order
 * of a search: by premium then plan id when premiums exist, plans without one last; else by name then id.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { open } from 'lmdb';
import { DB, LMDB_OPTIONS } from '../../src/engine/build-format.ts';
import { readDentalCatalog, searchDental } from '../../src/engine/dental.ts';
import type { DentalPlanRecord } from '../../src/engine/dental-record.ts';

const dir = mkdtempSync(join(tmpdir(), 'hpd-dental-engine-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function plan(id: string, name: string): DentalPlanRecord {
  return {
    id,
    standard_component_id: id.slice(0, 14),
    name,
    issuer_id: id.slice(0, 5),
    issuer: 'Tooth Co',
    state: 'TX',
    plan_type: 'ppo',
    metal_level: 'low',
    enrollees: 'adult_and_child',
    on_exchange: id.endsWith('-01'),
    csr_variation: 'Standard Low On Exchange Plan',
    service_area_id: 'TXS001',
    ehb_pediatric_dental_apportionment: 1,
    deductible_individual: null,
    max_out_of_pocket_individual: 425,
    links: { benefits_summary: null, brochure: null },
  };
}

const cents = (dollars: number, band = 26): number[] => Array.from({ length: 51 }, (_, b) => (b === band ? dollars * 100 : 0));

async function catalogOf(file: string, fill: boolean) {
  const root = open({ path: join(dir, file), ...LMDB_OPTIONS });
  if (fill) {
    const plans = [plan('11111TX0000001-01', 'Zeta'), plan('11111TX0000002-01', 'alpha'), plan('11111TX0000003-00', 'Alpha')];
    await root.transaction(() => {
      for (const p of plans) root.openDB({ name: DB.dentalPlans }).put(p.id, p);
      root.openDB({ name: DB.dentalOffers }).put('48201', [
        { id: '11111TX0000001-01', zips: null },
        { id: '11111TX0000002-01', zips: ['77003'] },
        { id: '11111TX0000003-00', zips: null },
      ]);
      root.openDB({ name: DB.dentalRates }).put('11111TX0000001', [[10, cents(30)]]);
      root.openDB({ name: DB.dentalRates }).put('11111TX0000003', [[10, cents(20)]]);
      root.openDB({ name: DB.dentalStates }).put('TX', { rates_loaded: true });
    });
  } else {
    root.openDB({ name: DB.plans }).putSync('x', 1);
  }
  await root.close();
  const ro = open({ path: join(dir, file), ...LMDB_OPTIONS, readOnly: true });
  return { catalog: readDentalCatalog((name) => ro.openDB({ name })), close: () => ro.close() };
}

describe('dental catalog and search', () => {
  test('a partial county lists its plan in its ZIPs only; premiums by area and age band, 0 = not rated', async () => {
    const { catalog, close } = await catalogOf('a.mdb', true);
    try {
      assert.equal(catalog.variantCount, 3);
      assert.deepEqual(
        catalog.offeredAt('48201', '77002').map((p) => p.id),
        ['11111TX0000001-01', '11111TX0000003-00'],
      );
      assert.equal(catalog.offeredAt('48201', '77003').length, 3);
      assert.deepEqual(catalog.offeredAt('48157', '77477'), []);
      assert.equal(catalog.premium('11111TX0000001', 10, 40), 30);
      assert.equal(catalog.premium('11111TX0000001', 10, 41), null, 'band not rated');
      assert.equal(catalog.premium('11111TX0000001', 11, 40), null, 'another area');
      assert.equal(catalog.ratesLoaded('TX'), true);
      assert.equal(catalog.ratesLoaded('AK'), false);
    } finally {
      close();
    }
  });

  test('order: premium then id, unpriced last; without any premium, name (case-insensitive) then id', async () => {
    const { catalog, close } = await catalogOf('b.mdb', true);
    try {
      const where = { countyFips: '48201', zip: '77003', ratingArea: 10 };
      assert.deepEqual(
        searchDental(catalog, where, 40).map((r) => [r.plan.id, r.premium]),
        [
          ['11111TX0000003-00', 20],
          ['11111TX0000001-01', 30],
          ['11111TX0000002-01', null],
        ],
      );
      assert.deepEqual(
        searchDental(catalog, where, 50).map((r) => r.plan.id),
        ['11111TX0000002-01', '11111TX0000003-00', '11111TX0000001-01'],
        'alpha and Alpha tie on the name: id decides; Zeta last',
      );
    } finally {
      close();
    }
  });

  test('a build compiled before dental plans has an empty catalog', async () => {
    const { catalog, close } = await catalogOf('c.mdb', false);
    try {
      assert.equal(catalog.variantCount, 0);
      assert.deepEqual(catalog.offeredAt('48201', '77002'), []);
      assert.equal(catalog.ratesLoaded('TX'), false);
    } finally {
      close();
    }
  });
});
