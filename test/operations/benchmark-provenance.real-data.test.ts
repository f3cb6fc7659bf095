/**
 * @module Answers a tax preparer can check, from the real PY2024 (CT, RI, VT state-exchange files) and
 * PY2025 (federal files, modeled premiums) builds served together: a benchmark-only estimate cites the
 * benchmark table and its vintage, never another file's date; an answer without plan data for its
 * state and year names and links the years that have it; the benchmark's EHB portion is what the
 * credit counts; a family tier's member amounts say they are shares; the REST bytes of such pages are
 * the serializer's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { linkHeader } from '../../src/http/conditional.ts';
import { writeAptcPage } from '../../src/http/aptc-page-writer.ts';
import { compileSerializer } from '../../src/http/serializers.ts';
import { AptcPageModel } from '../../src/operations/aptc-page.ts';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { APTC_RESPONSE, estimateAptcOperation } from '../../src/operations/estimate-aptc.ts';
import { type BodyResult, execute } from '../../src/operations/operation.ts';
import { realBuildsForFile } from '../helpers/build-real-year.ts';
import { inScratch, runOperation } from '../helpers/run-operation.ts';

const BASE = 'http://api.test';
const BENCHMARK_FILE = 'slcsp_by_rating_area.yaml';
const real = realBuildsForFile('hpd-benchmark-provenance-', [2024, 2025], BASE);

type Body = any;

function run(path: string, query: string, pathParams: Record<string, string> = {}): BodyResult {
  return runOperation(real.registry, path, query, pathParams, 'enterprise', BASE);
}

function ok(path: string, query: string, pathParams: Record<string, string> = {}): Body {
  const r = run(path, query, pathParams);
  assert.ok(r.ok, `${path}?${query}: ${JSON.stringify(!r.ok && r.problem)}`);
  // As a client reads it: plan rows are objects whose members toJSON gives.
  return JSON.parse(JSON.stringify(r.body));
}

const APTC = '/v1/health/plans/aptc-estimate';
const adult = (zip: string, extra = ''): string => `zip=${zip}&household_income=40000&household_size=1&ages=40${extra}`;

describe('a benchmark-only estimate cites the benchmark table, not another file', () => {
  test('New York 2025 and 2024: the table, its vintage, no plan-file date; no year has NY plans', () => {
    for (const year of [2025, 2024]) {
      const body = ok(APTC, adult('10001', `&year=${year}`));
      assert.equal(body.benchmark_source, 'benchmark_only');
      assert.equal(body.data_source, 'state_exchange');
      assert.equal(
        body.data_freshness,
        `PY${year} benchmark only, no plan data for NY: SLCSP benchmarks ${BENCHMARK_FILE} (PolicyEngine-US, derived from KFF), values in force ${year}-01-01`,
      );
      // The federal files' (2024-12-05) or the state-exchange files' (2024-02-12) import date is not this answer's.
      assert.doesNotMatch(body.data_freshness, /as of/);
      assert.equal(body.benchmark_data.file, BENCHMARK_FILE);
      assert.equal(body.benchmark_data.in_force, `${year}-01-01`);
      assert.match(body.benchmark_data.title, /PolicyEngine-US from KFF/);
      assert.match(body.benchmark_data.sha256, /^[0-9a-f]{64}$/);
      assert.deepEqual(body.plan_data_years, []);
      assert.equal(body._links.plan_data_years, undefined);
    }
  });

  test('Connecticut without a year: the 2025 benchmark approximation, naming and linking 2024, which has its plans', () => {
    const body = ok(APTC, adult('06103'));
    assert.equal(body.plan_year, 2025);
    assert.equal(body.benchmark_source, 'benchmark_only');
    assert.match(body.data_freshness, /^PY2025 benchmark only, no plan data for CT: .*values in force 2025-01-01$/);
    assert.deepEqual(body.plan_data_years, [2024]);
    assert.deepEqual(body._links.plan_data_years, [
      { href: `${BASE}${APTC}?zip=06103&household_income=40000&household_size=1&ages=40&year=2024`, title: 'PY2024' },
    ]);
    // The linked year answers from CT's own plans, dated by their files, with no table cited.
    const real = ok(APTC, adult('06103', '&year=2024'));
    assert.equal(real.benchmark_source, 'rate_puf');
    assert.equal(real.data_freshness, 'PY2024 as of 2024-02-12');
    assert.equal(real.benchmark_data, null);
    assert.deepEqual(real.plan_data_years, [2024]);
    assert.equal(real._links.plan_data_years, undefined);
  });

  test('a modeled 2025 estimate cites the table its premiums were modeled from', () => {
    const body = ok(APTC, adult('77002'));
    assert.equal(body.benchmark_source, 'modeled');
    assert.equal(body.benchmark_data.in_force, '2025-01-01');
  });
});

describe('answers without plan data name the years that have it', () => {
  test('/zips/06103 without a year says 2024 has CT plans and links the ZIP in 2024', () => {
    const body = ok('/v1/health/zips/{zip}', '', { zip: '06103' });
    assert.equal(body.plans_available, false);
    assert.deepEqual(body.plan_data_years, [2024]);
    assert.match(body.note, /^No plan data for CT in 2025; plan data for CT is loaded for 2024 \(pass year=2024\): /);
    assert.deepEqual(body._links.plan_data_years, [{ href: `${BASE}/v1/health/zips/06103?year=2024`, title: 'PY2024' }]);
    assert.match(body.data_freshness, /^PY2025 benchmark only, no plan data for CT/);
    const in2024 = ok('/v1/health/zips/{zip}', 'year=2024', { zip: '06103' });
    assert.equal(in2024.plans_available, true);
    assert.deepEqual(in2024.plan_data_years, [2024]);
    assert.equal(in2024._links.plan_data_years, undefined);
  });

  test('a plan search in CT without a year is a 404 naming 2024; in NY, which no loaded year has, the plain 404', () => {
    const ct = run('/v1/health/plans', 'zip=06103&age=40');
    assert.ok(!ct.ok);
    assert.equal(ct.problem.detail, 'No plan data for CT in 2025; plan data for CT is loaded for 2024 (pass year=2024).');
    // A CT plan ID or the state's issuers, asked of 2025, answer the same.
    const ctPlan = run('/v1/health/plans/{plan_id}', '', { plan_id: '76962CT0010005-01' });
    assert.ok(!ctPlan.ok);
    assert.equal(ctPlan.problem.detail, ct.problem.detail);
    const ctIssuers = run('/v1/health/issuers', 'state=CT');
    assert.ok(!ctIssuers.ok);
    assert.equal(ctIssuers.problem.detail, ct.problem.detail);
    const ny = run('/v1/health/plans', 'zip=10001&age=40');
    assert.ok(!ny.ok);
    assert.equal(ny.problem.detail, 'No plan data for NY in 2025.');
  });
});

describe('the credit counts the benchmark’s essential-health-benefit portion', () => {
  test('Connecticut 2024: the benchmark plan puts 99 % toward EHB, so the credit is 599.79 less the contribution, not 605.85', () => {
    const body = ok(APTC, adult('06103', '&year=2024'));
    assert.equal(body.benchmark_premium, 605.85);
    assert.equal(body.benchmark_ehb_share, 0.99);
    assert.equal(body.benchmark_ehb_premium, 599.79);
    assert.equal(body.household.expected_monthly_contribution, 165);
    assert.equal(body.aptc_amount, 434.79);
    assert.ok(body.notes.some((n: string) => /99 % of its premium toward essential health benefits/.test(n)));
  });

  test('a benchmark from the published table has no EHB split to report', () => {
    const body = ok(APTC, adult('10001'));
    assert.equal(body.benchmark_ehb_premium, null);
    assert.equal(body.benchmark_ehb_share, null);
    assert.equal(body.aptc_amount, Math.round((body.benchmark_premium - body.household.expected_monthly_contribution) * 100) / 100);
  });
});

describe('a family tier’s member amounts say they are shares', () => {
  test('Vermont 2024: every member carries an even share of the tier premium, labelled tier_share; Texas members their own rate', () => {
    const vt = ok(APTC, 'zip=05401&household_income=90000&household_size=3&ages=40,38,10&year=2024');
    assert.equal(vt.members.length, 3);
    for (const m of vt.members) assert.equal(m.premium_basis, 'tier_share');
    assert.equal(vt.members[2].slcsp_premium, vt.members[0].slcsp_premium);
    const tx = ok(APTC, 'zip=77002&household_income=90000&household_size=3&ages=40,38,10');
    for (const m of tx.members) assert.equal(m.premium_basis, 'member_rate');
  });

  test('a Vermont plan priced for a household labels its member shares too', () => {
    const search = ok('/v1/health/plans', 'zip=05401&age=40&year=2024&per_page=1');
    const id = search._embedded.plans[0].id;
    const detail = ok('/v1/health/plans/{plan_id}', 'zip=05401&ages=40,38,10&year=2024', { plan_id: id });
    assert.deepEqual(
      detail.pricing.members.map((m: Body) => m.premium_basis),
      ['tier_share', 'tier_share', 'tier_share'],
    );
  });
});

describe('an issuer name the state file leaves blank is null with the reason', () => {
  test('CT, RI and VT 2024 plans: issuer null, the note names the HIOS issuer ID and the missing document URLs', () => {
    for (const zip of ['06103', '02903', '05401']) {
      const search = ok('/v1/health/plans', `zip=${zip}&age=40&year=2024`);
      assert.ok(search._embedded.plans.length > 0, zip);
      for (const plan of search._embedded.plans) {
        assert.equal(plan.issuer, null, plan.id);
        assert.equal(
          plan.issuer_note,
          `The source Plans file does not publish the issuer name (HIOS issuer ID ${plan.id.slice(0, 5)}), nor the plan’s document URLs`,
        );
        assert.equal(plan.links.brochure, null);
      }
      const detail = ok('/v1/health/plans/{plan_id}', 'year=2024', { plan_id: search._embedded.plans[0].id });
      assert.equal(detail.issuer, null);
      assert.equal(detail.issuer_note, search._embedded.plans[0].issuer_note);
    }
  });

  test('a plan whose file names its issuer carries the name and no note', () => {
    const plan = ok('/v1/health/plans', 'zip=77002&age=40&per_page=1')._embedded.plans[0];
    assert.equal(typeof plan.issuer, 'string');
    assert.ok(plan.issuer.length > 0);
    assert.equal(plan.issuer_note, null);
  });
});

describe('the REST bytes of these pages are the serializer’s', () => {
  test('benchmark-only with year links, benchmark table cited, EHB split, tier shares', () => {
    const serialize = compileSerializer(APTC_RESPONSE);
    const body = new ByteWriter(32);
    const link = new ByteWriter(8);
    const queries = [
      adult('06103'),
      adult('06103', '&year=2024'),
      adult('10001', '&year=2024'),
      adult('77002'),
      'zip=05401&household_income=90000&household_size=3&ages=40,38,10&year=2024',
    ];
    for (const q of queries) {
      inScratch((scratch) => {
        const r = execute(
          estimateAptcOperation,
          { registry: real.registry, baseUrl: BASE },
          'enterprise',
          [...new URLSearchParams(q)],
          {},
          scratch,
        );
        assert.ok(r.ok, q);
        assert.ok(r.model instanceof AptcPageModel, q);
        writeAptcPage(r.model, body, link, `${BASE}/v1/openapi.json`);
        const objects = r.model.toBody();
        assert.equal(body.view().toString('utf8'), serialize(objects), q);
        assert.equal(link.view().toString('utf8'), linkHeader(objects._links, `${BASE}/v1/openapi.json`), q);
      });
    }
  });
});
