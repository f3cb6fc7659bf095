/**
 * @module Answers about the PY2024 state-exchange states through `execute()`: provenance
 * per state in search answers and /years listing each year's states (Connecticut's geography:
 * connecticut-legacy-counties.real-data.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { realBuildsForFile } from '../helpers/build-real-year.ts';
import { bodyOf, runOperation } from '../helpers/run-operation.ts';

const real = realBuildsForFile('hpd-ops-2024-', [2024]);

type Body = any;

function run(path: string, query: string, pathParams: Record<string, string> = {}): Body {
  return bodyOf(runOperation(real.registry, path, query, pathParams));
}

describe('PY2024 answers from real state-exchange premiums', () => {
  test('a search in each state says real premiums, as of the SBE files', () => {
    for (const zip of ['06103', '02903', '05401']) {
      const body = run('/v1/health/plans', `zip=${zip}&age=40&year=2024`);
      assert.equal(body.data_source, 'puf_data', zip);
      assert.equal(body.data_freshness, 'PY2024 as of 2024-02-12', zip);
      assert.ok(body.total > 0, zip);
    }
  });

  test('/years lists 2024 with its three states, all real', () => {
    const body = run('/v1/health/years', '');
    assert.deepEqual(body.years, [
      { year: 2024, states: ['CT', 'RI', 'VT'], real_premium_states: ['CT', 'RI', 'VT'], modeled_premium_states: [] },
    ]);
  });
});

describe('PY2024 ICHRA affordability on real premiums', () => {
  test('in CT, RI and VT the lowest-cost silver plan is the first of a premium-sorted silver search; 8.39 % of income', () => {
    for (const zip of ['06103', '02903', '05401']) {
      const search = run('/v1/health/plans', `zip=${zip}&age=40&year=2024&metal_level=silver&per_page=1`);
      const first = search._embedded.plans[0];
      const body = run('/v1/health/ichra/affordability', `zip=${zip}&age=40&household_income=40000&hra_monthly=250&year=2024`);
      assert.equal(body.lcsp_plan_id, first.id, zip);
      assert.equal(body.lcsp_premium, first.premium, zip);
      assert.equal(body.required_contribution_percentage, 8.39, zip);
      // 40,000 × 8.39 % ÷ 12 = 279.666… a month.
      assert.equal(body.affordability_threshold, 279.67, zip);
      assert.equal(body.affordable, Math.round(first.premium * 100) - 25_000 <= (40_000 * 8.39) / 12, zip);
      assert.equal(body.premium_source, 'rate_puf', zip);
      assert.equal(body.notes.length, 1, zip);
    }
  });
});

describe('PY2024 household premiums on real rates', () => {
  test('a household’s premium is the Rate PUF’s: CT and RI sum the members’ rates, VT takes the family-tier amount (hand-checked)', () => {
    // Figures read by hand from CTRates05102024.csv, RIRates05102024.csv and VTRates05102024.csv (PY2024).
    const cases = [
      // CT, Rating Area 2: 523.23 (age 40) + 510.12 (38) + 313.20 (0-14)
      { zip: '06103', plan: '86545CT1230025-01', ages: '40,38,10', premium: 1346.55, members: [523.23, 510.12, 313.2] },
      // RI, Rating Area 1: 280.96 + 273.92 + 168.18
      { zip: '02903', plan: '77514RI0010006-01', ages: '40,38,10', premium: 723.06, members: [280.96, 273.92, 168.18] },
      // RI: 280.96 + 273.92 + 188.84 (16) + 2 × 168.18 (12, 9); the fourth child under 21 (4) is free
      {
        zip: '02903',
        plan: '77514RI0010006-01',
        ages: '40,38,16,12,9,4',
        premium: 1080.08,
        members: [280.96, 273.92, 188.84, 168.18, 168.18, 0],
      },
      // VT, Rating Area 1: the COUPLE AND ONE DEPENDENT column, split evenly by VT's flat age curve
      { zip: '05401', plan: '13627VT0340005-01', ages: '40,38,10', premium: 2041.24, members: [680.42, 680.41, 680.41] },
    ];
    for (const c of cases) {
      const detail = run('/v1/health/plans/{plan_id}', `zip=${c.zip}&ages=${c.ages}&year=2024`, { plan_id: c.plan });
      assert.equal(detail.pricing.premium, c.premium, `${c.plan} ${c.ages}`);
      const shares = (detail.pricing.members as Array<{ premium: number }>).map((m) => m.premium);
      assert.deepEqual(shares, c.members, `${c.plan} ${c.ages} members`);
    }
    // The first of each state's household search for two adults and a child is that plan.
    for (const c of cases.filter((x) => x.ages === '40,38,10')) {
      const first = run('/v1/health/plans', `zip=${c.zip}&ages=${c.ages}&year=2024&per_page=1`)._embedded.plans[0];
      assert.deepEqual([first.id, first.premium], [c.plan, c.premium], c.zip);
    }
  });
});
