import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset, type BuildResult } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { FatalBuildError } from '../../build/read/diagnostics.ts';
import { benchmarkByBand, MODELED_SOURCE_NAME, planVariation } from '../../build/model-rates.ts';
import { AGE_BAND_COUNT, bandAge } from '../../src/engine/age-bands.ts';
import { openCurrentDataset, type Dataset } from '../../src/engine/dataset.ts';
import { ageCurveFor, loadRules } from '../../src/engine/rules.ts';
import { FIXTURE_BENCHMARKS_2025, FIXTURE_PLANS, FIXTURE_ZIPS, planAttributesCsv, writeFixtureInputs } from '../helpers/fixture-inputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const quiet = () => createProgress({ tty: false, quiet: true });

function build(dir: string, sourcesFile: string, extra: Partial<Parameters<typeof buildDataset>[0]> = {}): Promise<BuildResult> {
  return buildDataset({
    year: 2025,
    root: ROOT,
    buildsRoot: join(dir, 'builds'),
    cacheDir: join(dir, 'cache'),
    sourcesFile,
    offline: true,
    progress: quiet(),
    ...extra,
  });
}

describe('compiling the fixture dataset with modeled premiums', () => {
  let dir: string;
  let result: BuildResult;
  let ds: Dataset;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-compile-'));
    const f = writeFixtureInputs(join(dir, 'in'));
    result = await build(dir, f.sourcesFile);
    ds = openCurrentDataset(join(dir, 'builds'), 2025);
  });
  after(() => {
    ds?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the manifest labels the premiums as modeled and counts what went in', () => {
    const m = result.manifest;
    assert.equal(m.year, 2025);
    assert.equal(m.data_source, 'puf_data+modeled_premiums');
    assert.equal(m.data_freshness, 'PY2025 as of 2024-11-20; premiums modeled from SLCSP benchmarks');
    assert.equal(m.premiums.source, 'modeled');
    assert.equal(m.counts.plans, FIXTURE_PLANS.length);
    assert.equal(m.counts.states_with_plans, 2);
    assert.equal(m.states.TX!.plans, 10);
    assert.equal(m.states.AK!.plans, 3);
    const pa = m.inputs.find((i) => i.name === 'plan_attributes')!;
    assert.equal(pa.rows_rejected, 0);
    assert.equal(pa.rows_ignored, 0, 'the dental row is kept apart, as a dental plan');
    assert.match(m.build_hash, /^[0-9a-f]{64}$/);
    assert.equal(ds.buildHash, m.build_hash);
  });

  test('every ZIP of the states resolves; territories are left out; a split ZIP keeps both locations by residential share', () => {
    for (const zip of [
      FIXTURE_ZIPS.harris,
      FIXTURE_ZIPS.montgomery,
      FIXTURE_ZIPS.anchorage,
      FIXTURE_ZIPS.fairbanks,
      FIXTURE_ZIPS.honolulu,
    ]) {
      const locs = ds.resolveZip(zip);
      assert.ok(locs !== null && locs.length > 0, `${zip} resolves`);
      for (const l of locs) assert.ok(l.ratingArea > 0);
    }
    assert.equal(ds.resolveZip(FIXTURE_ZIPS.puertoRico), null);
    assert.equal(ds.resolveZip('12345'), null);
    const split = ds.resolveZip(FIXTURE_ZIPS.split)!;
    assert.deepEqual(
      split.map((l) => [l.countyFips, l.ratingArea, l.primary]),
      [
        ['48157', 26, true],
        ['48201', 10, false],
      ],
    );
    assert.equal(split[0]!.countyName, 'Fort Bend County');
  });

  test('ZIP3-rated states take the rating area from the ZIP3 table', () => {
    assert.equal(ds.resolveZip(FIXTURE_ZIPS.anchorage)![0]!.ratingArea, 1);
    assert.equal(ds.resolveZip(FIXTURE_ZIPS.fairbanks)![0]!.ratingArea, 2);
  });

  test('plan lists follow service areas: whole state, counties, partial-county ZIPs, off-exchange plans left out', () => {
    const offered = (zip: string): string[] => {
      const loc = ds.resolveZip(zip)![0]!;
      const size = ds.listSize(loc.listId);
      return Array.from({ length: size }, (_, k) => ds.plan(ds.listPlan(loc.listId, k)).standardComponentId).sort();
    };
    assert.deepEqual(offered(FIXTURE_ZIPS.montgomery), ['22222TX0020001', '22222TX0020002', '22222TX0020003']);
    const harris = offered(FIXTURE_ZIPS.harris);
    assert.ok(harris.includes('33333TX0030001'), 'partial-county plan offered in its ZIP');
    assert.ok(!harris.includes('33333TX0030002'), 'off-exchange-only plan not offered');
    assert.ok(harris.includes('11111TX0010001'));
    const splitFortBend = offered(FIXTURE_ZIPS.split);
    assert.ok(!splitFortBend.includes('33333TX0030001'), 'partial-county plan not offered outside its ZIPs');
    assert.equal(ds.resolveZip(FIXTURE_ZIPS.honolulu)![0]!.listId, 0xffff_ffff, 'no plan data for HI');
  });

  test('every plan is priced in every rating area its service area covers', () => {
    const expected: Record<string, number[]> = {
      '11111TX0010001': [10, 26],
      '22222TX0020001': [10, 26, 27],
      '33333TX0030001': [10],
      '44444AK0040001': [1, 2],
    };
    for (const [scid, areas] of Object.entries(expected)) {
      for (const a of areas) assert.ok(ds.premium(scid, a, 40) !== null, `${scid} priced in area ${a}`);
    }
    assert.equal(ds.premium('33333TX0030001', 27, 40), null, 'not priced outside its service area');
  });

  test('modeled SLCSP equals the benchmark exactly at every age, in every rating area with silver plans', () => {
    const rules = loadRules(2025);
    for (const [key, bench] of Object.entries(FIXTURE_BENCHMARKS_2025)) {
      const [state, areaText] = key.split(':') as [string, string];
      const area = Number(areaText);
      if (state === 'HI') continue;
      const expected = benchmarkByBand(bench, ageCurveFor(rules, state).factors, false);
      // Benchmark-eligible silver plans priced in the area: on exchange, not child-only.
      const silver = FIXTURE_PLANS.filter(
        (p) => p.state === state && p.metal === 'Silver' && p.childOnly !== true && p.offExchangeOnly !== true,
      ).map((p) => p.scid);
      for (let b = 0; b < AGE_BAND_COUNT; b++) {
        const age = bandAge(b);
        const premiums = silver
          .map((s) => ds.premium(s, area, age))
          .filter((x): x is number => x !== null)
          .sort((x, y) => x - y);
        if (premiums.length === 0) continue;
        const second = premiums[1] ?? premiums[0]!;
        assert.equal(second, expected[b], `${key} age band ${b}`);
        assert.equal(ds.slcsp(state, area, age)?.amount, expected[b]);
        assert.equal(ds.slcsp(state, area, age)?.source, 'modeled');
      }
    }
  });

  test('age ratios follow the state curve: 0–14 is one band, 64 and over one band, 64/21 = 3', () => {
    const rules = loadRules(2025);
    const curve = ageCurveFor(rules, 'TX').factors;
    const scid = '11111TX0010004';
    const p21 = ds.premium(scid, 10, 21)!;
    for (const age of [0, 5, 14]) assert.equal(ds.premium(scid, 10, age), ds.premium(scid, 10, 0));
    assert.equal(ds.premium(scid, 10, 64), ds.premium(scid, 10, 65));
    for (const age of [15, 30, 40, 50, 63]) {
      const ratio = ds.premium(scid, 10, age)! / p21;
      assert.ok(Math.abs(ratio - curve[age - 14]! / curve[7]!) < 0.001, `age ${age} ratio ${ratio}`);
    }
    assert.ok(Math.abs(ds.premium(scid, 10, 64)! / p21 - 3) < 0.001);
  });

  test('metal factors and the per-plan variation are applied and deterministic', () => {
    assert.equal(planVariation('11111TX0010004'), planVariation('11111TX0010004'));
    const v = planVariation('11111TX0010004');
    assert.ok(v >= 0.88 && v <= 1.12);
    const gold = ds.premium('11111TX0010004', 10, 40)!;
    const bronze = ds.premium('11111TX0010003', 10, 40)!;
    assert.ok(gold > 0 && bronze > 0);
    assert.notEqual(gold, bronze);
  });

  test('areas without plan data carry the benchmark table SLCSP, labelled as such', () => {
    const hi = ds.slcsp('HI', 1, 0)!;
    assert.equal(hi.source, 'benchmark_only');
    assert.equal(hi.amount, FIXTURE_BENCHMARKS_2025['HI:1']);
  });

  test('plan detail records keep parsed money, nulls and SBC totals', () => {
    const rec = ds.planRecord('11111TX0010001-01')!;
    assert.equal(rec.issuer, 'Lone Star Health', 'issuer names are trimmed');
    assert.equal(rec.deductible.individual_tier1, 4500);
    assert.equal(rec.deductible.family_tier1, 9000);
    assert.equal(rec.deductible.individual_oon, null);
    assert.equal(rec.coinsurance_tier1, 0.2);
    assert.equal(rec.sbc_scenarios.having_baby.total, 4870);
    assert.equal(rec.links.brochure, null, '"N/A" is not a URL');
    assert.equal(rec.links.formulary, 'https://www.issuer.example/formulary');
    const csr = ds.planRecord('11111TX0010001-06')!;
    assert.equal(csr.deductible.individual_tier1, 500);
    assert.equal(ds.planRecord('99999XX0000000-01'), undefined);
  });

  test('plan lists are pre-sorted by each key with ties broken by plan id', () => {
    const loc = ds.resolveZip(FIXTURE_ZIPS.harris)![0]!;
    for (const age of [0, 30, 64]) {
      const order = ds.listOrder(loc.listId, 'premium', age);
      const premiums = [...order].map((pos) => ds.listPremiumCents(loc.listId, pos, age));
      // 0 = not sold at this age (a child-only plan for an adult): such plans come last.
      const key = (c: number): number => (c === 0 ? Infinity : c);
      assert.deepEqual(
        premiums,
        [...premiums].sort((a, b) => key(a) - key(b)),
      );
    }
    const byDed = [...ds.listOrder(loc.listId, 'deductible', 40)].map((pos) => ds.plan(ds.listPlan(loc.listId, pos)).deductible!);
    assert.deepEqual(
      byDed,
      [...byDed].sort((a, b) => a - b),
    );
    const byName = [...ds.listOrder(loc.listId, 'name', 40)].map((pos) => ds.plan(ds.listPlan(loc.listId, pos)).name.toLowerCase());
    assert.deepEqual(byName, [...byName].sort());
  });

  test('issuers per state count on-exchange standard plans', () => {
    assert.deepEqual(
      ds.issuers('TX').map((i) => [i.issuer_id, i.plan_count]),
      [
        ['33333', 1],
        ['22222', 3],
        ['11111', 5],
      ],
    );
  });

  test('an identical second build is reused, not rebuilt', async () => {
    const f = join(dir, 'in', 'sources-2025.json');
    const again = await build(dir, f);
    assert.equal(again.reused, true);
    assert.equal(again.manifest.build_hash, result.manifest.build_hash);
  });
});

describe('atomic publication', () => {
  test('a new build switches current atomically; a failing build leaves the previous one current and no partial directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-swap-'));
    try {
      const f = writeFixtureInputs(join(dir, 'in'));
      const first = await build(dir, f.sourcesFile);
      const yearDir = join(dir, 'builds', '2025');
      assert.equal(readlinkSync(join(yearDir, 'current')), first.manifest.build_hash);

      // Change one input: a new hash, a new directory, current moves.
      const plans = planAttributesCsv(
        2025,
        FIXTURE_PLANS.filter((p) => p.scid !== '11111TX0010005'),
      );
      writeFileSync(f.paths.plan_attributes!, plans);
      const second = await build(dir, f.sourcesFile);
      assert.notEqual(second.manifest.build_hash, first.manifest.build_hash);
      assert.equal(readlinkSync(join(yearDir, 'current')), second.manifest.build_hash);
      assert.ok(existsSync(join(yearDir, first.manifest.build_hash)), 'the old build stays on disk for readers that still map it');

      // A broken input: more than 1 % rejected rows fails the build.
      const broken = planAttributesCsv(2025, FIXTURE_PLANS).replaceAll('2025,TX', '2024,TX');
      writeFileSync(f.paths.plan_attributes!, broken);
      await assert.rejects(build(dir, f.sourcesFile), (err: unknown) => {
        assert.ok(err instanceof FatalBuildError);
        assert.match(err.message, /rows rejected/);
        assert.match(err.message, /plan-attributes-puf\.csv:\d+:\d+/);
        return true;
      });
      assert.equal(readlinkSync(join(yearDir, 'current')), second.manifest.build_hash);
      assert.deepEqual(
        readdirSync(yearDir).filter((n) => n.startsWith('.tmp-')),
        [],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing required column is fatal and names the file, line 1 and the column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-col-'));
    try {
      const csv = planAttributesCsv(2025).replace('MetalLevel', 'MetalLvl');
      const f = writeFixtureInputs(join(dir, 'in'), 2025, { planAttributes: csv });
      await assert.rejects(build(dir, f.sourcesFile), /plan-attributes-puf\.csv:1: missing required column\(s\) MetalLevel/);
      assert.equal(existsSync(join(dir, 'builds', '2025', 'current')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing required input offline names the input, where it was looked for and its official URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-missing-'));
    try {
      const f = writeFixtureInputs(join(dir, 'in'));
      rmSync(f.paths.service_area!);
      await assert.rejects(build(dir, f.sourcesFile), (err: unknown) => {
        assert.ok(err instanceof FatalBuildError);
        assert.match(err.message, /^service_area: required input not found/);
        assert.match(err.message, /service-area-puf\.csv/);
        assert.match(err.message, /offline/);
        assert.match(err.message, /http:\/\/127\.0\.0\.1:9\/service-area-puf\.csv/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a real Rate PUF instead of the model', () => {
  test('premiums come from the file, with 0-20 bands, placeholders and Family Option rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-rates-'));
    try {
      const header =
        'BusinessYear,StateCode,IssuerId,SourceName,ImportDate,RateEffectiveDate,RateExpirationDate,PlanId,RatingAreaId,Tobacco,Age,IndividualRate,IndividualTobaccoRate,Couple,PrimarySubscriberAndOneDependent,PrimarySubscriberAndTwoDependents,PrimarySubscriberAndThreeOrMoreDependents,CoupleAndOneDependent,CoupleAndTwoDependents,CoupleAndThreeOrMoreDependents';
      const rows: string[] = [header];
      const add = (scid: string, area: number, age: string, rate: string, period = ['2025-01-01', '2025-12-31']) =>
        rows.push(
          `2025,${scid.slice(5, 7)},${scid.slice(0, 5)},SERFF,2024-12-01,${period[0]},${period[1]},${scid},Rating Area ${area},Tobacco User/Non-Tobacco User,${age},${rate},,,,,,,,`,
        );
      for (const p of FIXTURE_PLANS) {
        for (const area of p.state === 'TX' ? [10, 26, 27] : [1, 2]) {
          add(p.scid, area, '0-20', '200.00');
          for (let age = 21; age <= 63; age++) add(p.scid, area, String(age), (300 + age).toFixed(2));
          add(p.scid, area, '64 and over', '999999');
          add(p.scid, area, '30', '1.00', ['2025-04-01', '2025-06-30']);
        }
      }
      rows.push(`2025,TX,99999,SERFF,2024-12-01,2025-01-01,2025-12-31,99999TX9990001,Rating Area 10,No Preference,30,250.00,,,,,,,,`);
      rows.push(
        `2025,TX,11111,SERFF,2024-12-01,2025-01-01,2025-12-31,11111TX0010001,Rating Area 10,No Preference,Family Option,400.00,,800.00,680.00,680.00,680.00,1140.00,1140.00,1140.00`,
      );
      const f = writeFixtureInputs(join(dir, 'in'), 2025, { rates: `${rows.join('\n')}\n` });
      const result = await build(dir, f.sourcesFile);
      assert.equal(result.manifest.data_source, 'puf_data');
      assert.equal(result.manifest.premiums.source, 'rate_puf');
      assert.doesNotMatch(result.manifest.data_freshness, /modeled/);
      const rates = result.manifest.inputs.find((i) => i.name === 'rates')!;
      assert.equal(rates.rows_rejected, 0);
      const ds = openCurrentDataset(join(dir, 'builds'), 2025);
      try {
        assert.equal(ds.premium('11111TX0010001', 10, 10), 200);
        assert.equal(ds.premium('11111TX0010001', 10, 20), 200, '0-20 band spreads over 15–20');
        assert.equal(ds.premium('11111TX0010001', 10, 30), 330, 'other rate periods are ignored');
        assert.equal(ds.premium('11111TX0010001', 10, 64), null, 'placeholder rate = not sold');
        assert.equal(ds.slcsp('TX', 10, 40)?.source, 'rate_puf');
        assert.equal(ds.slcsp('TX', 10, 40)?.amount, 340);
      } finally {
        ds.close();
      }
      assert.notEqual(MODELED_SOURCE_NAME, 'SERFF');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('the sources file of 2025 lists every input with an official source', () => {
  const s = JSON.parse(readFileSync(join(ROOT, 'data/sources/2025.json'), 'utf8')) as {
    inputs: Record<string, { url: string | null; home?: string; mirrors: Array<{ path: string; sha256?: string }> }>;
  };
  for (const [name, spec] of Object.entries(s.inputs)) {
    assert.ok(spec.url !== null || spec.home !== undefined, `${name} has an official source`);
    for (const m of spec.mirrors) assert.match(m.path, /^\.\.\/shared\/data\//, `${name} mirrors the shared data folder`);
  }
});
