/**
 * @module Connecticut ZIPs are priced by the legacy counties that define its rating areas, not by the
 * 2022 planning regions of HUD's current crosswalk. The expectation is read here, independently of the
 * build's own readers: HUD's Q4 2020 CT rows parsed with a plain split, each legacy county mapped to its
 * area by CMS's definition (shared/data/README.md §4.8), every CT ZIP of the current crosswalk compared
 * with the PY2024 build's ZIP lookup.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { realBuildsForFile, REPO_ROOT } from '../helpers/build-real-year.ts';
import { bodyOf, runOperation } from '../helpers/run-operation.ts';

const SHARED = resolve(REPO_ROOT, '../shared/data');

/** CMS: Connecticut's rating areas are its 8 legacy counties. */
const AREA_OF_LEGACY_COUNTY: Readonly<Record<string, number>> = {
  '09001': 1, // Fairfield
  '09003': 2, // Hartford
  '09005': 3, // Litchfield
  '09007': 4, // Middlesex
  '09009': 5, // New Haven
  '09011': 6, // New London
  '09013': 7, // Tolland
  '09015': 8, // Windham
};

/** The rows of a HUD CSV (no quoted fields in these files), BOM and CR stripped. */
function hudRows(path: string): Array<Record<string, string>> {
  const lines = readFileSync(path, 'utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((l) => l !== '');
  const header = lines[0]!.split(',');
  return lines.slice(1).map((l) => {
    const f = l.split(',');
    return Object.fromEntries(header.map((h, i) => [h, f[i]!]));
  });
}

/** Every CT ZIP of the current crosswalk → its planning regions, most residential addresses first. */
function currentRegions(): Map<string, string[]> {
  const byZip = new Map<string, Array<{ county: string; res: number }>>();
  for (const r of hudRows(join(SHARED, 'hud/ZIP_COUNTY_122024.csv'))) {
    if (!r.COUNTY!.startsWith('09')) continue;
    const list = byZip.get(r.ZIP!) ?? [];
    list.push({ county: r.COUNTY!, res: Number(r.RES_RATIO) });
    byZip.set(r.ZIP!, list);
  }
  return new Map(
    [...byZip].map(([zip, list]) => [zip, list.sort((a, b) => b.res - a.res || (a.county < b.county ? -1 : 1)).map((l) => l.county)]),
  );
}

/** Every CT ZIP of the current crosswalk → its legacy counties, most residential addresses first. */
function expectedLocations(): Map<string, Array<{ county: string; area: number }>> {
  const current = new Set(currentRegions().keys());
  const byZip = new Map<string, Array<{ county: string; res: number; tot: number }>>();
  for (const r of hudRows(join(SHARED, 'hud/ZIP_COUNTY_122020_CT.csv'))) {
    if (!current.has(r.ZIP!)) continue;
    const list = byZip.get(r.ZIP!) ?? [];
    list.push({ county: r.COUNTY!, res: Number(r.RES_RATIO), tot: Number(r.TOT_RATIO) });
    byZip.set(r.ZIP!, list);
  }
  assert.equal(byZip.size, current.size, 'every current CT ZIP is in the 2020 file');
  const out = new Map<string, Array<{ county: string; area: number }>>();
  for (const [zip, list] of byZip) {
    list.sort((a, b) => b.res - a.res || b.tot - a.tot || (a.county < b.county ? -1 : 1));
    out.set(
      zip,
      list.map((l) => ({ county: l.county, area: AREA_OF_LEGACY_COUNTY[l.county]! })),
    );
  }
  return out;
}

const real = realBuildsForFile('hpd-ct-legacy-', [2024]);

type Body = any;

function run(path: string, query: string, pathParams: Record<string, string> = {}): Body {
  return bodyOf(runOperation(real.registry, path, query, pathParams));
}

const zipLookup = (zip: string): Body => run('/v1/health/zips/{zip}', 'year=2024', { zip });

describe('Connecticut ZIPs are placed by their legacy counties (HUD Q4 2020)', () => {
  test('every CT ZIP of the current crosswalk answers with the legacy counties and areas of the 2020 crosswalk', () => {
    const expected = expectedLocations();
    const regions = currentRegions();
    assert.equal(expected.size, 402);
    const wrong: string[] = [];
    let multiArea = 0;
    for (const [zip, locs] of expected) {
      const body = zipLookup(zip);
      const got = body.locations.map((l: Body) => ({ county: l.county_fips, area: Number(l.rating_area_id.replace('Rating Area ', '')) }));
      if (JSON.stringify(got) !== JSON.stringify(locs)) wrong.push(`${zip}: ${JSON.stringify(got)} ≠ ${JSON.stringify(locs)}`);
      const spans = new Set(locs.map((l) => l.area)).size > 1;
      if (spans) multiArea++;
      if (body.multiple_areas !== spans) wrong.push(`${zip}: multiple_areas ${body.multiple_areas}`);
      if (body.locations.some((l: Body) => 'rating_area_uncertain' in l) || 'rating_area_note' in body) wrong.push(`${zip}: a guess`);
      const named = body.planning_regions?.map((r: Body) => r.county_fips);
      if (JSON.stringify(named) !== JSON.stringify(regions.get(zip))) wrong.push(`${zip}: planning regions ${JSON.stringify(named)}`);
    }
    assert.deepEqual(wrong.slice(0, 10), []);
    // 37 ZIPs span legacy counties; in 35 of them the counties are in different rating areas (all are).
    assert.equal(multiArea, [...expected.values()].filter((l) => l.length > 1).length);
    assert.equal(multiArea, 37);
  });

  test('Shelton 06484 is Fairfield County, area 1; Vernon 06066 and Storrs 06268 Tolland County, area 7', () => {
    for (const [zip, county, name, area] of [
      ['06484', '09001', 'Fairfield County', 'Rating Area 1'],
      ['06066', '09013', 'Tolland County', 'Rating Area 7'],
      ['06268', '09013', 'Tolland County', 'Rating Area 7'],
    ] as const) {
      const l = zipLookup(zip).locations[0];
      assert.deepEqual([l.county_fips, l.county_name, l.rating_area_id, l.primary], [county, name, area, true], zip);
    }
  });

  test('the planning region is named beside the legacy county: Shelton is Fairfield County in the Naugatuck Valley region', () => {
    const shelton = zipLookup('06484');
    assert.deepEqual(shelton.planning_regions, [
      { county_fips: '09140', name: 'Naugatuck Valley Planning Region', residential_share: 0.997461 },
      { county_fips: '09120', name: 'Greater Bridgeport Planning Region', residential_share: 0.002539 },
    ]);
    assert.equal(shelton.locations[0].county_name, 'Fairfield County');
    assert.equal(zipLookup('06066').planning_regions[0].name, 'Capitol Planning Region');
    // Elsewhere there is none.
    assert.equal('planning_regions' in zipLookup('02903'), false);
  });

  test('Riverton 06065 spans Hartford (area 2, primary) and Litchfield (area 3), each named; county_fips picks one', () => {
    const body = zipLookup('06065');
    assert.equal(body.multiple_areas, true);
    assert.deepEqual(
      body.locations.map((l: Body) => [l.county_fips, l.county_name, l.rating_area_id, l.residential_share, l.primary]),
      [
        ['09003', 'Hartford County', 'Rating Area 2', 0.628975, true],
        ['09005', 'Litchfield County', 'Rating Area 3', 0.371025, false],
      ],
    );
    const search = run('/v1/health/plans', 'zip=06065&age=40&year=2024&county_fips=09005&per_page=1');
    assert.deepEqual([search.county_fips, search.rating_area, search.multiple_areas], ['09005', 'Rating Area 3', true]);
  });

  test('Shelton is priced in area 1: the benchmark for one adult aged 40 in 2024 is $710.04', () => {
    const body = run('/v1/health/plans/aptc-estimate', 'zip=06484&household_income=30000&household_size=1&ages=40&year=2024');
    assert.equal(body.benchmark_premium, 710.04);
    // Vernon in area 7, not area 2 (Hartford, the bulk of its planning region).
    const vernon = run('/v1/health/plans/aptc-estimate', 'zip=06066&household_income=30000&household_size=1&ages=40&year=2024');
    const hartford = run('/v1/health/plans/aptc-estimate', 'zip=06103&household_income=30000&household_size=1&ages=40&year=2024');
    assert.notEqual(vernon.benchmark_premium, hartford.benchmark_premium);
  });

  test('the manifest names the 2020 crosswalk as an input and no longer carries a guessed-area section', () => {
    const input = real.results[0]!.manifest.inputs.find((i) => i.name === 'hud_zip_county_ct_2020');
    assert.ok(input !== undefined);
    assert.match(input.title, /Q4 2020, Connecticut/);
    assert.equal(input.sha256, '2b00b01ccc10c3b376933087708bdd14dec735f47d262604c107614052b85bde');
    assert.equal(input.rows_rejected, 0);
    assert.equal(input.rows_ignored, 1, '06749, not in the current crosswalk');
    assert.equal('rating_area_uncertainty' in real.results[0]!.manifest, false);
  });
});
