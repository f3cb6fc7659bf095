/**
 * @module Tests of the county-name join key (shared/data/README.md §4.5 and §6.2) and of the national geography
 * built from the REAL shared geography files: every ZIP of the 50 states and DC gets a rating area, and the
 * documented special cases (CA 2014 layout, LA County ZIP3 split, ZIP3 states, TX 27 areas, SD 46102, CT
 * planning regions) come out as documented.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { countyNameKey, splitTableKey } from '../../../build/geo/county-name-key.ts';
import { loadGeography, type Geography, type GeographyConfig } from '../../../build/geo/geography.ts';
import { createProgress } from '../../../build/progress.ts';
import { DiagnosticSink } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SHARED = '/work/shared/data';

/** Asserts that a rating-area table key and a Census county name reduce to the same key. */
function sameCounty(tableKey: string, censusName: string, state: string, key: string): void {
  const split = splitTableKey(tableKey);
  assert.ok(split, tableKey);
  assert.equal(split.state, state, tableKey);
  assert.equal(split.key, key, tableKey);
  assert.equal(countyNameKey(censusName), key, censusName);
}

describe('countyNameKey / splitTableKey', () => {
  it('apostrophes turned into underscores: PRINCE_GEORGE_S_COUNTY_MD ↔ "Prince George\'s County"', () => {
    sameCounty('PRINCE_GEORGE_S_COUNTY_MD', "Prince George's County", 'MD', 'PRINCEGEORGES');
    sameCounty('ST_MARY_S_COUNTY_MD', "St. Mary's County", 'MD', 'STMARYS');
    sameCounty('O_BRIEN_COUNTY_IA', "O'Brien County", 'IA', 'OBRIEN');
  });

  it('accents dropped and a missing suffix: DONA_ANA_NM ↔ "Doña Ana County"', () => {
    sameCounty('DONA_ANA_NM', 'Doña Ana County', 'NM', 'DONAANA');
    // Decomposed form (n + combining tilde) gives the same key.
    assert.equal(countyNameKey('Don\u0303a Ana County'), 'DONAANA');
  });

  it('hyphens dropped: VALDEZCORDOVA_AK ↔ "Valdez-Cordova Census Area", PRINCE_OF_WALESHYDER_AK', () => {
    sameCounty('VALDEZCORDOVA_AK', 'Valdez-Cordova Census Area', 'AK', 'VALDEZCORDOVA');
    sameCounty('PRINCE_OF_WALESHYDER_AK', 'Prince of Wales-Hyder Census Area', 'AK', 'PRINCEOFWALESHYDER');
    sameCounty('WADE_HAMPTON_AK', 'Wade Hampton Census Area', 'AK', 'WADEHAMPTON');
  });

  it('one county-type suffix removed on either side', () => {
    sameCounty('HARRIS_COUNTY_TX', 'Harris County', 'TX', 'HARRIS');
    sameCounty('ORLEANS_PARISH_LA', 'Orleans Parish', 'LA', 'ORLEANS');
    sameCounty('ANCHORAGE_MUNICIPALITY_AK', 'Anchorage Municipality', 'AK', 'ANCHORAGE');
    sameCounty('JUNEAU_CITY_AND_BOROUGH_AK', 'Juneau City and Borough', 'AK', 'JUNEAU');
    sameCounty('HAINES_AK', 'Haines Borough', 'AK', 'HAINES');
    sameCounty('PETERSBURG_AK', 'Petersburg Borough', 'AK', 'PETERSBURG');
    sameCounty('BAYLOR_TX', 'Baylor County', 'TX', 'BAYLOR');
    sameCounty('ADAMS_MS', 'Adams County', 'MS', 'ADAMS');
    sameCounty('LA_SALLE_LA', 'LaSalle Parish', 'LA', 'LASALLE');
    sameCounty('LA_SALLE_COUNTY_TX', 'La Salle County', 'TX', 'LASALLE');
    assert.equal(countyNameKey('Adjuntas Municipio'), 'ADJUNTAS');
    assert.equal(countyNameKey('Capitol Planning Region'), 'CAPITOL');
    assert.equal(countyNameKey('Kusilvak Census Area'), 'KUSILVAK');
  });

  it('strips only one suffix, and never the whole name', () => {
    assert.equal(countyNameKey('County'), 'COUNTY');
    assert.equal(countyNameKey('Borough County'), 'BOROUGH');
  });

  it('independent cities keep CITY: "Richmond city" ≠ "Richmond County"', () => {
    assert.equal(countyNameKey('Richmond city'), 'RICHMONDCITY');
    assert.equal(countyNameKey('Richmond County'), 'RICHMOND');
    assert.notEqual(countyNameKey('Richmond city'), countyNameKey('Richmond County'));
    sameCounty('RICHMOND_CITY_VA', 'Richmond city', 'VA', 'RICHMONDCITY');
    sameCounty('RICHMOND_COUNTY_VA', 'Richmond County', 'VA', 'RICHMOND');
    sameCounty('BALTIMORE_CITY_MD', 'Baltimore city', 'MD', 'BALTIMORECITY');
    sameCounty('BALTIMORE_COUNTY_MD', 'Baltimore County', 'MD', 'BALTIMORE');
    sameCounty('ST_LOUIS_CITY_MO', 'St. Louis city', 'MO', 'STLOUISCITY');
    sameCounty('ST_LOUIS_COUNTY_MO', 'St. Louis County', 'MO', 'STLOUIS');
  });

  it('splitTableKey refuses a key without a trailing state code', () => {
    assert.equal(splitTableKey('HARRIS'), null);
    assert.equal(splitTableKey('HARRIS_COUNTY_T'), null);
    assert.deepEqual(splitTableKey(' harris_county_tx '), { state: 'TX', key: 'HARRIS' });
  });
});

const STATES_AND_DC = new Set([
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'DC',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
]);

describe('loadGeography with the real shared data', () => {
  let geo: Geography;
  let sink: DiagnosticSink;
  let config: GeographyConfig;

  before(async () => {
    config = JSON.parse(fs.readFileSync(path.join(ROOT, 'data/geo/geography.json'), 'utf8')) as GeographyConfig;
    sink = new DiagnosticSink();
    geo = await loadGeography(
      {
        hud: `${SHARED}/hud/ZIP_COUNTY_122024.csv`,
        countyNames: `${SHARED}/census/county_fips_2020.csv`,
        ctRegions: `${SHARED}/census/ct_planning_regions_2022.csv`,
        countyAreas: `${SHARED}/rating-areas/county_rating_areas.csv`,
        countyAreas2014: `${SHARED}/rating-areas/county_rating_areas_2014.csv`,
        zip3Areas: `${SHARED}/rating-areas/zip3_rating_areas_2014.csv`,
        laZip3: `${SHARED}/rating-areas/la_county_zip3_rating_areas.yaml`,
        ctLegacy: `${SHARED}/hud/ZIP_COUNTY_122020_CT.csv`,
      },
      config,
      sink,
      createProgress({ tty: false, quiet: true }),
    );
  });

  it('the configured jurisdictions are the 50 states and DC', () => {
    assert.deepEqual(new Set(config.jurisdictions.value), STATES_AND_DC);
  });

  it('rejects no row of any input', () => {
    assert.equal(sink.errorCount, 0, JSON.stringify(sink.kept.filter((d) => d.severity === 'error').slice(0, 5)));
    for (const [file, c] of sink.files) assert.equal(c.rowsRejected, 0, file);
    assert.equal(sink.files.get('ZIP_COUNTY_122024.csv')?.rowsRead, 54553);
  });

  it('every HUD ZIP whose county is in the 50 states + DC resolves to ≥ 1 location with a positive rating area', async () => {
    const stateOfFips = new Map<string, string>();
    const counties = await openTable(`${SHARED}/census/county_fips_2020.csv`);
    const sf = counties.column('state_fips');
    const sc = counties.column('state_code');
    for await (const batch of counties.rows()) for (const r of batch) stateOfFips.set(r.fields[sf]!, r.fields[sc]!);
    const hud = await openTable(`${SHARED}/hud/ZIP_COUNTY_122024.csv`);
    const zi = hud.column('ZIP');
    const ci = hud.column('COUNTY');
    const expected = new Map<string, Set<string>>();
    let territoryRows = 0;
    for await (const batch of hud.rows()) {
      for (const r of batch) {
        const county = r.fields[ci]!;
        const state = stateOfFips.get(county.slice(0, 2));
        if (state === undefined || !STATES_AND_DC.has(state)) {
          territoryRows++;
          continue;
        }
        // Connecticut ZIPs get legacy counties, not these planning regions (connecticut-legacy-counties.real-data.test.ts).
        if (state === 'CT') continue;
        const zip = r.fields[zi]!;
        let set = expected.get(zip);
        if (set === undefined) expected.set(zip, (set = new Set()));
        set.add(county);
      }
    }
    assert.ok(expected.size > 38500, `${expected.size} ZIPs (and 402 of CT)`);
    assert.equal(sink.files.get('ZIP_COUNTY_122024.csv')?.rowsIgnored, territoryRows);
    const problems: string[] = [];
    for (const [zip, countySet] of expected) {
      const locs = geo.zips.get(zip);
      if (locs === undefined || locs.length === 0) {
        problems.push(`${zip}: no location`);
        continue;
      }
      for (const l of locs) {
        if (!Number.isInteger(l.ratingArea) || l.ratingArea < 1) problems.push(`${zip}/${l.countyFips}: area ${l.ratingArea}`);
        if (!STATES_AND_DC.has(l.state)) problems.push(`${zip}: state ${l.state}`);
      }
      const got = new Set(locs.map((l) => l.countyFips));
      for (const c of countySet) if (!got.has(c)) problems.push(`${zip}: county ${c} missing`);
    }
    assert.deepEqual(problems.slice(0, 20), []);
    // Territories are left out.
    assert.equal(geo.zips.has('00601'), false);
  });

  it('sorts the locations of each ZIP by residential share, descending', () => {
    let multi = 0;
    for (const [zip, locs] of geo.zips) {
      if (locs.length > 1) multi++;
      for (let i = 1; i < locs.length; i++) {
        const a = locs[i - 1]!;
        const b = locs[i]!;
        assert.ok(a.resRatio > b.resRatio || (a.resRatio === b.resRatio && a.totRatio >= b.totRatio), `${zip}: ${JSON.stringify(locs)}`);
      }
    }
    assert.ok(multi > 10000, `${multi} multi-county ZIPs`);
  });

  const areaOfCounty = (fips: string): number[] => [...(geo.countyAreas.get(fips) ?? [])].sort((a, b) => a - b);
  const areasOfZip = (zip: string): number[] => (geo.zips.get(zip) ?? []).map((l) => l.ratingArea);

  it('California: Orange County → 18 (2014 layout); LA County split by ZIP3: 90210 → 16, Pasadena 91101 → 15', () => {
    assert.deepEqual(areaOfCounty('06059'), [18]);
    assert.deepEqual(areasOfZip('90210'), [16]);
    assert.deepEqual(areasOfZip('91101'), [15]);
    assert.equal(geo.zips.get('91101')![0]!.countyFips, '06037');
    // The other four counties the current table gets wrong (README §4.5).
    assert.deepEqual(areaOfCounty('06027'), [13]); // Inyo
    assert.deepEqual(areaOfCounty('06051'), [13]); // Mono
    assert.deepEqual(areaOfCounty('06031'), [11]); // Kings
    assert.deepEqual(areaOfCounty('06107'), [10]); // Tulare
    assert.deepEqual(areaOfCounty('06037'), [15, 16]);
  });

  it('ZIP3 states: AK 99501 → 1, NE 68102 → 1', () => {
    assert.deepEqual(areasOfZip('99501'), [1]);
    assert.deepEqual(areasOfZip('68102'), [1]);
    assert.deepEqual(areasOfZip('99701'), [2]); // Fairbanks, ZIP3 997
    // North Platte NE (ZIP3 691) spans two counties, both in area 4 because NE is rated by ZIP3.
    assert.deepEqual(areasOfZip('69101'), [4, 4]);
  });

  it('Texas 27-area layout: Harris → 10, Fort Bend → 26, Montgomery → 27', () => {
    assert.deepEqual(areaOfCounty('48201'), [10]);
    assert.deepEqual(areaOfCounty('48157'), [26]);
    assert.deepEqual(areaOfCounty('48339'), [27]);
  });

  it('SD Oglala Lakota (46102) → 1', () => {
    assert.deepEqual(areaOfCounty('46102'), [1]);
    assert.ok(geo.counties.has('46102'));
  });

  it("name-key joins: Richmond city VA → 7, Richmond County VA → 12, Prince George's MD → 3, Doña Ana NM → 3", () => {
    assert.deepEqual(areaOfCounty('51760'), [7]);
    assert.deepEqual(areaOfCounty('51159'), [12]);
    assert.deepEqual(areaOfCounty('24033'), [3]);
    assert.deepEqual(areaOfCounty('35013'), [3]);
  });

  it('every Connecticut planning region has a rating area', () => {
    const regions = [...geo.counties.values()].filter((c) => c.state === 'CT' && /^091[1-9]0$/.test(c.fips));
    assert.equal(regions.length, 9);
    for (const r of regions) {
      const a = geo.countyAreas.get(r.fips);
      assert.ok(a !== undefined && a.size > 0, r.fips);
      for (const n of a) assert.ok(n >= 1 && n <= 8, `${r.fips}: ${n}`);
    }
    // CT ZIPs are placed by legacy counties, so every area is used, 7 (Tolland) too, which no region's
    // hand mapping gives.
    assert.deepEqual(
      [...geo.stateAreas.get('CT')!].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
  });

  it('distinct rating areas per state match domain.md §11: TX 27, FL 67 (incl. 22), AK 3, NE 4, MA 7', () => {
    const expected: Record<string, number> = { TX: 27, FL: 67, AK: 3, NE: 4, MA: 7 };
    for (const [st, n] of Object.entries(expected)) {
      const areas = geo.stateAreas.get(st);
      assert.ok(areas, st);
      assert.equal(areas.size, n, st);
      assert.deepEqual(
        [...areas].sort((a, b) => a - b),
        Array.from({ length: n }, (_, i) => i + 1),
        st,
      );
    }
    assert.ok(geo.stateAreas.get('FL')!.has(22));
  });

  it('covers all 51 jurisdictions and no territory', () => {
    assert.deepEqual(new Set(geo.stateAreas.keys()), STATES_AND_DC);
  });
});
