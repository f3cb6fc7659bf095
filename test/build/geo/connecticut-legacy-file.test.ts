/**
 * @module The compiler's reading of HUD's Q4 2020 Connecticut rows: each bad row is refused with its
 * file, line, column and reason; a current CT ZIP the file lacks keeps its planning region's area with
 * a warning naming it; a 2020 ZIP the current crosswalk no longer has is not served.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadGeography, type GeographyConfig } from '../../../build/geo/geography.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, formatDiagnostic } from '../../../build/read/diagnostics.ts';
import { REPO_ROOT } from '../../helpers/build-real-year.ts';

const dir = mkdtempSync(join(tmpdir(), 'hpd-ct-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('bad rows of the 2020 CT file are refused by line, column and reason; a missing ZIP falls back with a warning', async () => {
  const hud = file(
    'ZIP_COUNTY_122024.csv',
    [
      'ZIP,COUNTY,USPS_ZIP_PREF_CITY,USPS_ZIP_PREF_STATE,RES_RATIO,BUS_RATIO,OTH_RATIO,TOT_RATIO',
      '06484,09140,SHELTON,CT,1,1,1,1',
      '06065,09160,RIVERTON,CT,1,1,1,1',
      '06100,09110,NEWTOWN,CT,1,1,1,1',
    ].join('\r\n'),
  );
  const ct2020 = file(
    'ZIP_COUNTY_122020_CT.csv',
    [
      'ZIP,COUNTY,RES_RATIO,BUS_RATIO,OTH_RATIO,TOT_RATIO',
      '06484,09001,1.000000000,1,1,1.000000000',
      '06065,09005,0.371024735,1,0.75,0.383561644',
      '06065,09003,0.628975265,0,0.25,0.616438356',
      '06065,09140,0.1,0,0,0.1',
      '6O65,09003,1,1,1,1',
      '06065,09009,n/a,1,1,1',
      '06749,09005,0,1,0,1',
    ].join('\r\n'),
  );
  const counties = file(
    'county_fips_2020.csv',
    [
      'state_code,state_name,state_fips,county_fips,full_fips,county_name,county_display_name',
      'CT,Connecticut,09,001,09001,Fairfield County,Fairfield',
      'CT,Connecticut,09,003,09003,Hartford County,Hartford',
      'CT,Connecticut,09,005,09005,Litchfield County,Litchfield',
      'CT,Connecticut,09,009,09009,New Haven County,New Haven',
    ].join('\r\n'),
  );
  const regions = file(
    'ct_planning_regions_2022.csv',
    'state_code,county_fips,county_name\nCT,09110,Capitol Planning Region\nCT,09140,Naugatuck Valley Planning Region\nCT,09160,Northwest Hills Planning Region\n',
  );
  const areas = file(
    'county_rating_areas.csv',
    'county,rating_area\nFAIRFIELD_COUNTY_CT,1\nHARTFORD_COUNTY_CT,2\nLITCHFIELD_COUNTY_CT,3\nNEW_HAVEN_COUNTY_CT,5\n',
  );
  const config = JSON.parse(readFileSync(join(REPO_ROOT, 'data/geo/geography.json'), 'utf8')) as GeographyConfig;
  const sink = new DiagnosticSink();
  const geo = await loadGeography(
    {
      hud,
      countyNames: counties,
      ctRegions: regions,
      countyAreas: areas,
      countyAreas2014: file('county_rating_areas_2014.csv', 'statefip,state,countyfip,county,ratingarea\n'),
      zip3Areas: file('zip3_rating_areas_2014.csv', 'statefip,state,ratingarea,zip3\n2,Alaska,1,995\n'),
      laZip3: file('la.yaml', 'description: LA\n900:\n  2014-01-01: 16\n'),
      ctLegacy: ct2020,
    },
    config,
    sink,
    createProgress({ tty: false, quiet: true }),
  );
  const errors = sink.kept.filter((d) => d.severity === 'error' && d.file === 'ZIP_COUNTY_122020_CT.csv').map(formatDiagnostic);
  assert.equal(errors.length, 3, errors.join('\n'));
  assert.match(errors[0]!, /^ZIP_COUNTY_122020_CT\.csv:5:2: a planning region, not a legacy county.* \(column COUNTY, value "09140"\)$/);
  assert.match(errors[1]!, /^ZIP_COUNTY_122020_CT\.csv:6:1: must be a 5-digit code \(column ZIP/);
  assert.match(errors[2]!, /^ZIP_COUNTY_122020_CT\.csv:7:3: ratio is not a number \(column RES_RATIO/);
  const warnings = sink.kept.filter((d) => d.severity === 'warning');
  assert.deepEqual(
    warnings.map((w) => [w.code, w.file]),
    [[DIAGNOSTIC_CODES.geography, 'ZIP_COUNTY_122020_CT.csv']],
  );
  assert.match(warnings[0]!.reason, /ZIP 06100 is not in this file: placed by its planning region 09110 \(Rating Area 2\)/);

  const placed = (zip: string) => geo.zips.get(zip)?.map((l) => [l.countyFips, l.countyName, l.ratingArea]);
  assert.deepEqual(placed('06484'), [['09001', 'Fairfield County', 1]]);
  assert.deepEqual(placed('06065'), [
    ['09003', 'Hartford County', 2],
    ['09005', 'Litchfield County', 3],
  ]);
  assert.deepEqual(placed('06100'), [['09110', 'Capitol Planning Region', 2]]);
  assert.equal(geo.zips.has('06749'), false);
  assert.equal(sink.files.get('ZIP_COUNTY_122020_CT.csv')?.rowsIgnored, 1);
});
