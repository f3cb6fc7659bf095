/**
 * Each operation's rules through `execute()` alone, without a server: the endpoint tier gate, field
 * validation (with the field names a client corrects), the cross-parameter checks, the parameter tier
 * gate, the year check and not-found answers, and the order between them (steps 6–10 of
 * docs/compatibility.md#request-processing-order).
 * Operations are found by their REST path, the public name least likely to change in a refactor.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type DataRegistry, openRegistry } from '../../src/operations/data-registry.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { type BodyResult, execute, executeToBody, type Operation } from '../../src/operations/operation.ts';
import { inScratch } from '../helpers/run-operation.ts';
import { threadScratch } from '../../src/operations/request-scratch.ts';
import type { ProblemSpec } from '../../src/operations/problems.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { buildCrosswalkFixture } from '../helpers/crosswalk-fixture.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

let dir: string;
let registry: DataRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-ops-'));
  registry = openRegistry(await buildCrosswalkFixture(dir), 'http://api.test');
});
after(() => {
  registry?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the operation at `path` for a caller of `tier` with a query string (and path parameters). */
function run(path: string, tier: Tier, query: string, pathParams: Record<string, string> = {}): BodyResult {
  const op: Operation<never> | undefined = OPERATIONS.find((o) => o.path === path);
  assert.ok(op !== undefined, `no operation at ${path}`);
  return executeToBody(op, { registry, baseUrl: 'http://api.test' }, tier, [...new URLSearchParams(query)], pathParams, threadScratch());
}

type Body = any;

function ok(r: BodyResult): Body {
  assert.ok(r.ok, `expected a body, got ${JSON.stringify(!r.ok && r.problem)}`);
  return r.body;
}

function problem(r: BodyResult, kind: ProblemSpec['kind']): ProblemSpec {
  assert.ok(!r.ok, 'expected a problem');
  assert.equal(r.problem.kind, kind, JSON.stringify(r.problem));
  return r.problem;
}

/** The `field: message` pairs of a validation problem, in order. */
function fieldErrors(r: BodyResult): string[] {
  return (problem(r, 'validation').errors ?? []).map((e) => `${e.field}: ${e.message}`);
}

const PLANS = '/v1/health/plans';
const DETAIL = '/v1/health/plans/{plan_id}';
const COMPARE = '/v1/health/plans/compare';
const APTC = '/v1/health/plans/aptc-estimate';
const OOP = '/v1/health/plans/{plan_id}/oop-estimate';
const CROSSWALK = '/v1/health/plans/crosswalk';
const ZIPS = '/v1/health/zips/{zip}';
const ISSUERS = '/v1/health/issuers';
const YEARS = '/v1/health/years';
const TX_SILVER = '11111TX0010001-01';

describe('endpoint tier gate (step 6): before validation', () => {
  for (const [path, detail, pathParams] of [
    [DETAIL, 'Plan details require a Pro subscription.', { plan_id: TX_SILVER }],
    [COMPARE, 'Plan comparison requires a Pro subscription.', {}],
    [APTC, 'APTC estimates require a Pro subscription.', {}],
    [OOP, 'Out-of-pocket estimates require a Pro subscription.', { plan_id: TX_SILVER }],
    [CROSSWALK, 'Plan crosswalk requires a Pro subscription.', {}],
  ] as const) {
    test(`${path}: free gets 402 with its own detail even with no parameters; pro passes the gate`, () => {
      const p = problem(run(path, 'free', '', pathParams), 'paymentRequired');
      assert.deepEqual(p, { kind: 'paymentRequired', detail, required_tier: 'pro', upgrade: true });
      const pro = run(path, 'pro', '', pathParams);
      assert.ok(pro.ok || pro.problem.kind !== 'paymentRequired', 'Pro is past the gate');
    });
  }
  test('free endpoints answer a free caller', () => {
    ok(run(YEARS, 'free', ''));
    ok(run(ZIPS, 'free', '', { zip: FIXTURE_ZIPS.harris }));
    ok(run(ISSUERS, 'free', 'state=TX'));
    ok(run(PLANS, 'free', 'zip=77002&age=40'));
  });
});

describe('search: validation, parameter tier gate, year', () => {
  test('missing required parameters are all named', () => {
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', '')), ['zip: Required', 'age: Required']);
  });
  test('malformed values are named with the public wording; several at once', () => {
    const errors = fieldErrors(run(PLANS, 'pro', 'zip=7700&age=66&per_page=0&metal_level=tin'));
    assert.deepEqual(
      errors.filter((e) => !e.startsWith('metal_level')),
      [
        'zip: String must contain exactly 5 characters',
        'age: Number must be less than or equal to 65',
        'per_page: Number must be greater than or equal to 1',
      ],
    );
    // The list of allowed metal levels is being unified: only its form is checked.
    assert.match(errors[2]!, /^metal_level: Invalid enum value\. Expected 'bronze' \| .*, received 'tin'$/);
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=4.5')), ['age: Expected integer, received float']);
  });
  test('income and household_size go together; page > 1 not with a cursor', () => {
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&income=30000')), ['household_size: Required']);
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&household_size=2')), ['income: Required']);
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&cursor=abc&page=2')), ['page: Must not be given with cursor']);
  });
  test('Pro parameters: named in request order, singular and plural; sort_by=premium is free', () => {
    assert.equal(
      problem(run(PLANS, 'free', 'zip=77002&age=40&issuer=lone'), 'paymentRequired').detail,
      'The parameter issuer requires a Pro subscription.',
    );
    assert.equal(
      problem(run(PLANS, 'free', 'zip=77002&age=40&max_premium=500&sort_by=name'), 'paymentRequired').detail,
      'The parameters max_premium, sort_by require a Pro subscription.',
    );
    ok(run(PLANS, 'free', 'zip=77002&age=40&sort_by=premium'));
    ok(run(PLANS, 'pro', 'zip=77002&age=40&issuer=lone'));
    ok(run(PLANS, 'enterprise', 'zip=77002&age=40&sort_by=name'));
  });
  test('validation comes before the parameter gate, the parameter gate before the year check', () => {
    assert.deepEqual(fieldErrors(run(PLANS, 'free', 'zip=abc&age=40&issuer=lone')), ['zip: String must contain exactly 5 characters']);
    problem(run(PLANS, 'free', 'zip=77002&age=40&issuer=lone&year=2024'), 'paymentRequired');
  });
  test('a year without data is a 400 on year listing the loaded years; no year means the newest', () => {
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&year=2024')), [
      'year: Year 2024 is not available. Available years: 2025',
    ]);
    assert.equal(ok(run(PLANS, 'pro', 'zip=77002&age=40')).plan_year, 2025);
    const search: Operation<never> = OPERATIONS.find((o) => o.path === PLANS)!;
    const canonical = inScratch((scratch) => {
      const r = execute(search, { registry, baseUrl: 'http://api.test' }, 'pro', 'zip=77002&age=40', {}, scratch);
      return r.ok ? r.canonical : '';
    });
    assert.ok(canonical.includes('year=2025'), 'the defaulted year is part of the canonical request (ETag)');
  });
  test('location: unknown ZIP 404, a county outside the ZIP 400 on county_fips, a state without plans 404', () => {
    assert.equal(problem(run(PLANS, 'pro', 'zip=12345&age=40'), 'notFound').detail, 'ZIP code 12345 not found.');
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&county_fips=48157')), [
      'county_fips: County 48157 is not part of ZIP 77002',
    ]);
    assert.equal(problem(run(PLANS, 'pro', `zip=${FIXTURE_ZIPS.honolulu}&age=40`), 'notFound').detail, 'No plan data for HI in 2025.');
  });
  test('catastrophic plans: listed under 30, or at any age when asked for by metal level', () => {
    const catastrophic = (query: string): boolean =>
      ok(run(PLANS, 'free', query))._embedded.plans.some((p: { metal_level: string }) => p.metal_level === 'catastrophic');
    assert.equal(catastrophic('zip=77002&age=29'), true);
    assert.equal(catastrophic('zip=77002&age=30'), false);
    assert.equal(catastrophic('zip=77002&age=40&metal_level=catastrophic'), true);
  });
  test('a cursor that is not one of this query is a 400 on cursor', () => {
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&cursor=bm90LWEtY3Vyc29y')), [
      'cursor: Not a cursor this API issued: send the next_cursor of the previous page unchanged',
    ]);
    const first = ok(run(PLANS, 'pro', 'zip=77002&age=40&per_page=2'));
    assert.ok(typeof first.next_cursor === 'string');
    ok(run(PLANS, 'pro', `zip=77002&age=40&per_page=2&cursor=${first.next_cursor}`));
    assert.deepEqual(
      fieldErrors(run(PLANS, 'pro', `zip=77002&age=41&per_page=2&cursor=${first.next_cursor}`)),
      [
        'cursor: Issued for another query (other filters or sort): send it with the parameters of the request that returned it, or drop it to start again',
      ],
      'another age: another query',
    );
  });
  test('aliases fold into their canonical name; a conflicting pair is refused on the alias', () => {
    assert.equal(ok(run(PLANS, 'pro', 'zip=77002&age=40&page_size=3')).per_page, 3);
    assert.deepEqual(fieldErrors(run(PLANS, 'pro', 'zip=77002&age=40&per_page=3&page_size=4')), ['page_size: Conflicts with per_page']);
  });
});

describe('plan detail', () => {
  test('a bare 14-character ID is its -01 variant; an unknown one is 404 naming it', () => {
    assert.equal(ok(run(DETAIL, 'pro', '', { plan_id: '11111TX0010001' })).id, TX_SILVER);
    assert.equal(problem(run(DETAIL, 'pro', '', { plan_id: '99999XX0000000-00' }), 'notFound').detail, 'Plan 99999XX0000000-00 not found.');
  });
  test('the path parameter may not be repeated in the query; a missing year is a 400', () => {
    assert.deepEqual(fieldErrors(run(DETAIL, 'pro', 'plan_id=22222TX0020001-01', { plan_id: TX_SILVER })), [
      'plan_id: Is not a query parameter of this endpoint (it is part of the path)',
    ]);
    assert.deepEqual(fieldErrors(run(DETAIL, 'pro', 'year=2026', { plan_id: TX_SILVER })), [
      'year: Year 2026 is not available. Available years: 2025',
    ]);
  });
});

describe('compare', () => {
  const base = 'zip=77002&age=40';
  test('2 to 4 distinct IDs (a bare ID and its -01 variant are the same plan)', () => {
    assert.deepEqual(fieldErrors(run(COMPARE, 'pro', `${base}&ids=${TX_SILVER}`)), ['ids: Array must contain at least 2 element(s)']);
    assert.deepEqual(fieldErrors(run(COMPARE, 'pro', `${base}&ids=${TX_SILVER},11111TX0010001`)), ['ids: Plan IDs must be distinct']);
    assert.equal(
      ok(run(COMPARE, 'pro', `${base}&ids=${TX_SILVER}&ids=22222TX0020001-01`))._embedded.plans.length,
      2,
      'a repeated list parameter appends',
    );
  });
  test('an unknown plan and a plan not sold at the ZIP are 404s naming the plan', () => {
    assert.equal(
      problem(run(COMPARE, 'pro', `${base}&ids=${TX_SILVER},99999XX0000000-01`), 'notFound').detail,
      'Plan 99999XX0000000-01 not found.',
    );
    assert.equal(
      problem(run(COMPARE, 'pro', `${base}&ids=${TX_SILVER},44444AK0040001-01`), 'notFound').detail,
      'Plan 44444AK0040001-01 is not offered in ZIP 77002.',
    );
  });
});

describe('APTC estimate', () => {
  test('no more ages than household members; list items are checked at their index', () => {
    assert.deepEqual(fieldErrors(run(APTC, 'pro', 'zip=77002&household_income=40000&household_size=1&ages=40,38')), [
      'ages: More members than household_size',
    ]);
    assert.deepEqual(fieldErrors(run(APTC, 'pro', 'zip=77002&household_income=40000&household_size=2&ages=40,x')), [
      'ages.1: Expected number, received string',
    ]);
  });
  test('income is an alias of household_income', () => {
    const body = ok(run(APTC, 'pro', 'zip=77002&income=30000&household_size=1&ages=40'));
    assert.equal(body.household.size, 1);
    assert.equal(typeof body.aptc_amount, 'number');
  });
});

describe('out-of-pocket estimate', () => {
  test('scenario is one of five; a plan not sold at the ZIP is a 404', () => {
    assert.match(
      fieldErrors(run(OOP, 'pro', 'zip=77002&age=40&scenario=extreme', { plan_id: TX_SILVER }))[0]!,
      /^scenario: Invalid enum value/,
    );
    assert.equal(
      problem(run(OOP, 'pro', 'zip=77002&age=40&scenario=low', { plan_id: '44444AK0040001-01' }), 'notFound').detail,
      'Plan 44444AK0040001-01 is not offered in ZIP 77002.',
    );
    assert.equal(ok(run(OOP, 'pro', 'zip=77002&age=40&scenario=having_baby', { plan_id: TX_SILVER })).sbc_data_available, true);
  });
});

describe('crosswalk: checks its own year against the crosswalk data', () => {
  test('a source year without crosswalk data is a 400 on year naming the covered years', () => {
    assert.deepEqual(fieldErrors(run(CROSSWALK, 'pro', 'plan_id=11111TX0010001&year=2024&state=TX')), [
      'year: Year 2024 has no crosswalk data. Available years: 2025',
    ]);
  });
  test('state: a state exchange and a plan of another state are named on their own field', () => {
    assert.deepEqual(fieldErrors(run(CROSSWALK, 'pro', 'plan_id=11111TX0010001&year=2025&state=CA')), [
      'state: State CA has no crosswalk data; only HealthCare.gov states are covered',
    ]);
    assert.deepEqual(fieldErrors(run(CROSSWALK, 'pro', 'plan_id=11111TX0010001&year=2025&state=AK')), [
      'plan_id: Plan 11111TX0010001 is not a AK plan',
    ]);
  });
  test('a plan without an entry is a 404; a crosswalked plan names its target', () => {
    assert.equal(
      problem(run(CROSSWALK, 'pro', 'plan_id=11111TX0010009&year=2025&state=TX'), 'notFound').detail,
      'No crosswalk entry for plan 11111TX0010009 in 2025.',
    );
    const body = ok(run(CROSSWALK, 'pro', 'plan_id=11111TX0010002&year=2025&state=TX'));
    assert.equal(body.target_plan.plan_id, '11111TX0010001');
    assert.equal(body.source_plan.year, 2025);
  });
});

describe('ZIP lookup, issuers, years', () => {
  test('lookup: a malformed ZIP is a 400, an unknown one a 404, a split one lists both locations', () => {
    assert.deepEqual(fieldErrors(run(ZIPS, 'free', '', { zip: '7700' })), ['zip: String must contain exactly 5 characters']);
    assert.equal(problem(run(ZIPS, 'free', '', { zip: '12345' }), 'notFound').detail, 'ZIP code 12345 not found.');
    const body = ok(run(ZIPS, 'free', '', { zip: FIXTURE_ZIPS.split }));
    assert.equal(body.locations.length, 2);
    assert.equal(body.multiple_areas, true);
  });
  test('issuers: an unknown state is a 400, a state without plans a 404, TX lists its three issuers', () => {
    assert.deepEqual(fieldErrors(run(ISSUERS, 'free', 'state=ZZ')), ['state: Unknown state code ZZ']);
    assert.equal(problem(run(ISSUERS, 'free', 'state=HI'), 'notFound').detail, 'No plan data for HI in 2025.');
    assert.deepEqual(
      ok(run(ISSUERS, 'free', 'state=TX'))
        .issuers.map((i: { issuer_id: string }) => i.issuer_id)
        .sort(),
      ['11111', '22222', '33333'],
    );
  });
  test('years: the loaded years and the default', () => {
    const body = ok(run(YEARS, 'free', ''));
    assert.deepEqual([body.available_years, body.current_year], [[2025], 2025]);
  });
});
