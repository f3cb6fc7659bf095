/**
 * @module Plan year 2024 compiled from the three state-based-exchange bundles of the shared data:
 * what each file gave, provenance per state, the service-area decision for Vermont, and
 * the build errors of a state given twice and of a year without its own rule table.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BuildResult } from '../../build/compile.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../build/read/diagnostics.ts';
import type { SourcesFile } from '../../build/sources.ts';
import { openDataset } from '../../src/engine/dataset.ts';
import { buildRealYear, REPO_ROOT } from '../helpers/build-real-year.ts';

const dir = mkdtempSync(join(tmpdir(), 'hpd-sbe-build-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SOURCES_2024 = JSON.parse(readFileSync(join(REPO_ROOT, 'data/sources/2024.json'), 'utf8')) as SourcesFile;

/** A sources file written to the temporary directory, its mirror paths made absolute. */
function writeSources(name: string, s: SourcesFile): string {
  const inputs = Object.fromEntries(
    Object.entries(s.inputs).map(([k, v]) => [k, { ...v, mirrors: v.mirrors.map((m) => ({ ...m, path: resolve(REPO_ROOT, m.path) })) }]),
  );
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ ...s, inputs }));
  return path;
}

describe('PY2024 from the CT, RI and VT state-exchange bundles', () => {
  let built: BuildResult;
  before(async () => {
    built = await buildRealYear(join(dir, 'real'), 2024);
  });

  test('every SBE row is read; none rejected; rows out of scope are SHOP, other quarters', () => {
    const rows = Object.fromEntries(built.manifest.inputs.map((i) => [i.name, [i.rows_read, i.rows_rejected, i.rows_ignored]]));
    assert.deepEqual(
      {
        sbe_ct_plans: rows.sbe_ct_plans,
        sbe_ct_rates: rows.sbe_ct_rates,
        sbe_ct_service_areas: rows.sbe_ct_service_areas,
        sbe_ri_plans: rows.sbe_ri_plans,
        sbe_ri_rates: rows.sbe_ri_rates,
        sbe_ri_service_areas: rows.sbe_ri_service_areas,
        sbe_vt_plans: rows.sbe_vt_plans,
        sbe_vt_rates: rows.sbe_vt_rates,
        sbe_vt_service_areas: rows.sbe_vt_service_areas,
      },
      {
        // Individual dental plans, their rates and service areas are kept: CT 6 plans,
        // 2,448 rate rows, 5 service-area rows; RI 7, 357, 2; VT 1, 1 (its file has no service areas).
        sbe_ct_plans: [82, 0, 5],
        sbe_ct_rates: [19584, 0, 8160],
        sbe_ct_service_areas: [14, 0, 3],
        sbe_ri_plans: [119, 0, 25],
        sbe_ri_rates: [6222, 0, 4794],
        sbe_ri_service_areas: [8, 0, 4],
        sbe_vt_plans: [131, 0, 26],
        sbe_vt_rates: [55, 0, 26],
        sbe_vt_service_areas: [0, 0, 0],
      },
    );
    assert.equal(built.manifest.warnings.rows_rejected, 0);
    const s = built.manifest.states;
    assert.deepEqual(
      [s.CT, s.RI, s.VT].map((c) => [c?.plans, c?.variants]),
      [
        [22, 71],
        [21, 87],
        [28, 104],
      ],
    );
  });

  test('provenance per state: each state its bundle, its files and real premiums', () => {
    const p = built.manifest.provenance ?? {};
    assert.deepEqual(Object.keys(p), ['CT', 'RI', 'VT']);
    assert.deepEqual(p.CT, {
      source: 'sbe-CT',
      plans_input: 'sbe_ct_plans',
      plans_file: 'CTPlans05102024.csv',
      service_area_file: 'CTServiceAreas05102024.csv',
      rates_file: 'CTRates05102024.csv',
      premiums: 'rate_puf',
      data_source: 'puf_data',
      data_freshness: 'PY2024 as of 2024-02-12',
    });
    assert.equal(p.VT?.rates_file, 'VTRates05102024.csv');
    assert.equal(built.manifest.data_source, 'puf_data');
    assert.equal(built.manifest.premiums.source, 'rate_puf');
    assert.equal(built.manifest.rules_year, 2024);
  });

  test("Vermont's Service Areas file without rows: its plans statewide, said in the manifest", () => {
    assert.deepEqual(built.manifest.service_areas, { statewide_by_decision: ['VT'], plans_without_service_area: 0 });
    assert.ok(
      built.manifest.warnings.kept.some((w) =>
        w.startsWith('VTServiceAreas05102024.csv:1: the Service Areas file has a header and no rows'),
      ),
    );
    assert.equal(built.manifest.states.VT?.zips, 305);
  });

  test('dental plans: the 14 individual variants (CT 6, RI 7, VT 1), each priced from its own Rates file', () => {
    const ds = openDataset(built.dir);
    try {
      const dental = ds.dental();
      assert.equal(dental.variantCount, 14);
      const offered = (zip: string) => {
        const loc = ds.resolveZip(zip)![0]!;
        return dental.offeredAt(loc.countyFips, zip).map((p) => p.id);
      };
      assert.equal(offered('06103').length, 6);
      assert.equal(offered('02903').length, 7);
      assert.deepEqual(offered('05401'), ['67380VT0070001-01'], 'VT statewide, as its medical plans');
      for (const state of ['CT', 'RI', 'VT']) assert.equal(dental.ratesLoaded(state), true);
      // CTRates05102024.csv line 15583; RIRates05102024.csv line 2425; VTRates05102024.csv line 29.
      assert.equal(dental.premium('86545CT1400003', 2, 40), 38.76);
      assert.equal(dental.premium('15287RI0860001', 1, 40), 14.92);
      assert.equal(dental.premium('67380VT0070001', 1, 21), 59);
      assert.equal(dental.premium('67380VT0070001', 1, 64), 59);
      // The medical tables know nothing of them.
      assert.equal(ds.planIndex('86545CT1400003'), undefined);
      assert.equal(ds.premium('86545CT1400003', 2, 40), null);
    } finally {
      ds.close();
    }
  });
});

describe('build errors of the sources', () => {
  test('a state given by two sources stops the build and names both files', async () => {
    const again = join(dir, 'CTPlans-again.csv');
    copyFileSync(resolve(REPO_ROOT, SOURCES_2024.inputs.sbe_ct_plans!.mirrors[0]!.path), again);
    const twice: SourcesFile = {
      ...SOURCES_2024,
      inputs: {
        ...SOURCES_2024.inputs,
        again_plans: { ...SOURCES_2024.inputs.sbe_ct_plans!, bundle: 'sbe-CT-again', mirrors: [{ path: again }] },
        again_areas: { ...SOURCES_2024.inputs.sbe_ct_service_areas!, bundle: 'sbe-CT-again' },
      },
    };
    await assert.rejects(
      buildRealYear(join(dir, 'twice'), 2024, writeSources('twice.json', twice)),
      (err: unknown) =>
        err instanceof FatalBuildError &&
        err.code === DIAGNOSTIC_CODES.sourceClash &&
        /^CTPlans-again\.csv: plans of CT, which CTPlans05102024\.csv already provides/.test(err.message),
    );
  });

  test('a plan year without its own rule table stops the build instead of borrowing another FPL', async () => {
    await assert.rejects(
      buildRealYear(join(dir, 'no-rules'), 2023, writeSources('2023.json', { ...SOURCES_2024, year: 2023 })),
      (err: unknown) =>
        err instanceof FatalBuildError &&
        err.code === DIAGNOSTIC_CODES.inputMissing &&
        /no rule table data\/rules\/2023\.json/.test(err.message),
    );
  });
});
