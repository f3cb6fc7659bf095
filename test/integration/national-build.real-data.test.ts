/**
 * The full PY2025 build from ../shared/data, checked against the inputs: the states and plan counts the
 * data README documents, every ZIP of those states resolving, and every plan priced in every rating
 * area its service area covers (recomputed here from the Service Area PUF, not from the build's lists).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { realBuildsForFile } from '../helpers/build-real-year.ts';
import { openTable } from '../../build/read/table.ts';
import { bandAge, AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';
import { openCurrentDataset, type Dataset } from '../../src/engine/dataset.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHARED = join(ROOT, '..', 'shared', 'data');

/** Individual medical standard component ids per state (shared/data/README.md §4.1, observed). */
const PLANS_PER_STATE: Record<string, number> = {
  TX: 935,
  WI: 366,
  FL: 364,
  IL: 347,
  NC: 217,
  AZ: 206,
  OH: 188,
  OK: 172,
  MI: 162,
  TN: 155,
  NE: 125,
  SC: 122,
  LA: 118,
  MO: 118,
  IA: 104,
  IN: 91,
  MT: 90,
  KS: 81,
  UT: 68,
  SD: 61,
  MS: 58,
  ND: 58,
  OR: 57,
  AR: 48,
  NH: 46,
  DE: 45,
  AL: 42,
  WV: 35,
  WY: 30,
  HI: 17,
  AK: 15,
};

describe('national PY2025 build from the shared data', () => {
  const real = realBuildsForFile('hpd-national-', [2025]);
  let ds: Dataset;
  before(() => {
    ds = openCurrentDataset(real.builds, 2025);
  });
  after(() => ds?.close());

  test('31 states, 4,541 plans, 22,663 variants, 206 issuers, as the inputs document', () => {
    const m = real.results[0]!.manifest;
    assert.equal(m.counts.states_with_plans, 31);
    assert.deepEqual(ds.statesWithPlans(), Object.keys(PLANS_PER_STATE).sort());
    assert.equal(m.counts.plans, 4541);
    assert.equal(m.counts.plan_variants, 22663);
    assert.equal(m.counts.issuers, 206);
    for (const [state, n] of Object.entries(PLANS_PER_STATE)) assert.equal(m.states[state]?.plans, n, state);
    const pa = m.inputs.find((i) => i.name === 'plan_attributes')!;
    assert.equal(pa.rows_read, 24527);
    assert.equal(pa.rows_rejected, 0);
    assert.equal(m.data_source, 'puf_data+modeled_premiums');
    assert.match(m.data_freshness, /^PY2025 as of 2024-12-\d\d; premiums modeled from SLCSP benchmarks$/);
  });

  test('every ZIP of the 50 states and DC resolves, and every ZIP of the 31 states has plans', async () => {
    const states = new Set(Object.keys(PLANS_PER_STATE));
    const hud = await openTable(join(SHARED, 'hud/ZIP_COUNTY_122024.csv'));
    const zipCol = hud.column('ZIP');
    const countyCol = hud.column('COUNTY');
    const stateOfFips = new Map<string, string>();
    const census = await openTable(join(SHARED, 'census/county_fips_2020.csv'));
    for await (const batch of census.rows())
      for (const r of batch) stateOfFips.set(r.fields[census.column('state_fips')]!, r.fields[census.column('state_code')]!);
    const notTerritory = new Set(['PR', 'GU', 'VI', 'MP', 'AS', 'UM']);
    let checked = 0;
    let withPlans = 0;
    const missing: string[] = [];
    for await (const batch of hud.rows()) {
      for (const r of batch) {
        const zip = r.fields[zipCol]!;
        const state = stateOfFips.get(r.fields[countyCol]!.slice(0, 2));
        if (state === undefined || notTerritory.has(state)) continue;
        const locs = ds.resolveZip(zip);
        checked++;
        if (locs === null || locs.length === 0) {
          missing.push(zip);
          continue;
        }
        // Connecticut ZIPs are placed by legacy counties, not the planning regions of this file
        // (connecticut-legacy-counties.real-data.test.ts).
        const here = state === 'CT' ? locs[0] : locs.find((l) => l.countyFips === r.fields[countyCol]);
        assert.ok(here !== undefined && here.ratingArea > 0, `${zip} in county ${r.fields[countyCol]}`);
        if (states.has(here.state)) {
          if (ds.listSize(here.listId) === 0) missing.push(`${zip}/${here.countyFips} has no plans`);
          else withPlans++;
        }
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(checked > 54_000, `${checked} ZIP-county rows checked`);
    assert.ok(withPlans > 33_000, `${withPlans} ZIP-county rows with plans`);
  });

  test('every plan is priced at every age in every rating area its service area covers', async () => {
    // Service area → rating areas, recomputed from the Service Area PUF and the build's county table.
    const sa = await openTable(join(SHARED, 'cms/py2025/service-area-puf.csv'));
    const c = (n: string): number => sa.column(n);
    const areasBySa = new Map<string, Set<number>>();
    const statewide = new Set<string>();
    for await (const batch of sa.rows()) {
      for (const r of batch) {
        const f = r.fields;
        if (f[c('MarketCoverage')] !== 'Individual' || f[c('DentalOnlyPlan')] !== 'No') continue;
        const key = `${f[c('IssuerId')]}|${f[c('ServiceAreaId')]}|${f[c('StateCode')]}`;
        let set = areasBySa.get(key);
        if (set === undefined) areasBySa.set(key, (set = new Set()));
        if (f[c('CoverEntireState')] === 'Yes') {
          statewide.add(key);
          continue;
        }
        if (f[c('PartialCounty')] === 'Yes') {
          for (const zip of f[c('ZipCodes')]!.split(/[,\s]+/).filter(Boolean)) {
            const loc = ds.resolveZip(zip)?.find((l) => l.countyFips === f[c('County')]);
            if (loc !== undefined) set.add(loc.ratingArea);
          }
          continue;
        }
        for (const a of ds.county(f[c('County')]!)?.rating_areas ?? []) set.add(a);
      }
    }
    let pairs = 0;
    const unpriced: string[] = [];
    for (const scid of ds.planIds()) {
      const rec = ds.planRecord(`${scid}-01`) ?? ds.planRecord(`${scid}-00`)!;
      const key = `${rec.issuer_id}|${rec.service_area_id}|${rec.state}`;
      const areas = statewide.has(key) ? stateAreas(ds, rec.state) : (areasBySa.get(key) ?? new Set<number>());
      for (const area of areas) {
        pairs++;
        for (let b = 0; b < AGE_BAND_COUNT; b += 7) {
          if (ds.premium(scid, area, bandAge(b)) === null) unpriced.push(`${scid} area ${area} age ${bandAge(b)}`);
        }
      }
    }
    assert.deepEqual(unpriced.slice(0, 10), []);
    assert.equal(pairs, real.results[0]!.manifest.counts.premium_pairs);
  });

  test('modeled SLCSP equals the benchmark table in every rating area with silver plans', () => {
    // TX RA10 2025 benchmark is $308 (shared/data/README.md §4.6); federal curve 0–14 = 0.765, 40 = 1.278.
    assert.equal(ds.slcsp('TX', 10, 10)?.amount, 308);
    assert.equal(ds.slcsp('TX', 10, 40)?.amount, Math.round(((308 * 1.278) / 0.765) * 100) / 100);
    assert.equal(ds.slcsp('TX', 10, 40)?.source, 'modeled');
    // A state without plan data still has a benchmark (APTC works there), labelled as such.
    assert.equal(ds.slcsp('CA', 16, 0)?.source, 'benchmark_only');
    assert.equal(ds.resolveZip('90210')![0]!.ratingArea, 16);
  });
});

const areasOfState = new Map<string, Set<number>>();
function stateAreas(ds: Dataset, state: string): Set<number> {
  let out = areasOfState.get(state);
  if (out !== undefined) return out;
  out = new Set<number>();
  for (let z = 0; z < 100_000; z++) {
    const locs = ds.resolveZip(String(z).padStart(5, '0'));
    if (locs === null) continue;
    for (const l of locs) if (l.state === state) out.add(l.ratingArea);
  }
  areasOfState.set(state, out);
  return out;
}
