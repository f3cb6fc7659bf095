/**
 * @module Error paths through a real server: exact status, problem slug, `instance` = path and
 * `errors[].field` (docs/compatibility.md#transport-and-methods,
 * docs/compatibility.md#shared-query-parameters, docs/compatibility.md#zips-in-several-rating-areas,
 * docs/compatibility.md#problem-catalogue, docs/compatibility.md#endpoints), plus the pricing rules
 * that are easiest to see from outside (child rate, age-64 cap, catastrophic eligibility).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, expectProblem, messageOf } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-errors-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SEARCH = '/v1/health/plans';

describe('parameter validation (400 validation-error)', () => {
  test('missing required parameters are reported together', async () => {
    const body = await expectProblem(await s.get(SEARCH), 400, SEARCH, { fields: ['zip', 'age'], detail: 'Invalid input.' });
    assert.equal(body.title, 'Validation Error');
    assert.equal(messageOf(body, 'zip'), 'Required');
    assert.equal(messageOf(body, 'age'), 'Required');
  });

  test('several invalid parameters are reported together with the documented wording', async () => {
    const body = await expectProblem(await s.get(`${SEARCH}?zip=7700&age=abc`), 400, SEARCH, { detail: 'Invalid input.' });
    assert.deepEqual(new Set(body.errors.map((e: { field: string }) => e.field)), new Set(['zip', 'age']));
    assert.equal(messageOf(body, 'age'), 'Expected number, received string');
    assert.equal(messageOf(body, 'zip'), 'String must contain exactly 5 characters');
    const more = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=3.5&metal_level=tin&per_page=0&sort_order=up`), 400, SEARCH);
    assert.deepEqual(
      new Set(more.errors.map((e: { field: string }) => e.field)),
      new Set(['age', 'metal_level', 'per_page', 'sort_order']),
    );
    assert.equal(messageOf(more, 'age'), 'Expected integer, received float');
    assert.equal(messageOf(more, 'sort_order'), "Invalid enum value. Expected 'asc' | 'desc', received 'up'");
    assert.equal(messageOf(more, 'per_page'), 'Number must be greater than or equal to 1');
  });

  test('one invalid ZIP has the documented detail; an empty required value is Required', async () => {
    await expectProblem(await s.get(`${SEARCH}?zip=7700a&age=30`), 400, SEARCH, {
      fields: ['zip'],
      detail: 'Invalid ZIP code format. Expected 5 digits.',
    });
    const empty = await expectProblem(await s.get(`${SEARCH}?zip=&age=30`), 400, SEARCH, { fields: ['zip'] });
    assert.equal(messageOf(empty, 'zip'), 'Required');
    // An empty optional value is treated as absent.
    await expectOk(await s.get(`${SEARCH}?zip=77002&age=30&county_fips=`), 'searchPlans');
  });

  test('a repeated single-valued parameter is refused', async () => {
    const body = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&age=40`), 400, SEARCH, { fields: ['age'] });
    assert.equal(messageOf(body, 'age'), 'Parameter must not be repeated');
  });

  test('an alias conflicting with its canonical name is refused; equal values are fine', async () => {
    const body = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&per_page=10&page_size=20`), 400, SEARCH, {
      fields: ['page_size'],
    });
    assert.equal(messageOf(body, 'page_size'), 'Conflicts with per_page');
    const same = await expectOk(await s.get(`${SEARCH}?zip=77002&age=30&per_page=2&page_size=2`), 'searchPlans');
    assert.equal(same.per_page, 2);
    assert.equal(same.page_size, 2);
    const order = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&sort_order=asc&order=desc`), 400, SEARCH, {
      fields: ['order'],
    });
    assert.equal(messageOf(order, 'order'), 'Conflicts with sort_order');
  });

  test('page > 1 together with a cursor is refused', async () => {
    const first = await expectOk(await s.get(`${SEARCH}?zip=77002&age=30&per_page=2`), 'searchPlans');
    const cursor = first.next_cursor as string;
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&per_page=2&page=2&cursor=${cursor}`), 400, SEARCH, { fields: ['page'] });
    // page=1 with a cursor is allowed.
    await expectOk(await s.get(`${SEARCH}?zip=77002&age=30&per_page=2&page=1&cursor=${cursor}`), 'searchPlans');
  });

  test('income without household_size (and the reverse) is Required on the missing one', async () => {
    const a = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&income=30000`), 400, SEARCH, { fields: ['household_size'] });
    assert.equal(messageOf(a, 'household_size'), 'Required');
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&household_size=2`), 400, SEARCH, { fields: ['income'] });
  });

  test('age above 65 is refused; age below 0 too', async () => {
    const body = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=66`), 400, SEARCH, { fields: ['age'] });
    assert.equal(messageOf(body, 'age'), 'Number must be less than or equal to 65');
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=-1`), 400, SEARCH, { fields: ['age'] });
    await expectProblem(
      await s.get('/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=66&scenario=low'),
      400,
      '/v1/health/plans/11111TX0010001-01/oop-estimate',
      { fields: ['age'] },
    );
    await expectProblem(
      await s.get('/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=2&ages=40,66'),
      400,
      '/v1/health/plans/aptc-estimate',
      { fields: ['ages.1'] },
    );
  });

  test('APTC: each bad age is reported at its index; more ages than household_size is refused', async () => {
    const path = '/v1/health/plans/aptc-estimate';
    await expectProblem(await s.get(`${path}?zip=77002&household_income=30000&household_size=3&ages=40,x,2.5`), 400, path, {
      fields: ['ages.1', 'ages.2'],
    });
    const body = await expectProblem(await s.get(`${path}?zip=77002&household_income=30000&household_size=1&ages=40,38`), 400, path, {
      fields: ['ages'],
    });
    assert.equal(messageOf(body, 'ages'), 'More members than household_size');
    await expectProblem(await s.get(`${path}?zip=77002`), 400, path, { fields: ['household_income', 'household_size', 'ages'] });
  });

  test('OOP: the scenario must be one of the enum', async () => {
    const path = '/v1/health/plans/11111TX0010001-01/oop-estimate';
    const body = await expectProblem(await s.get(`${path}?zip=77002&age=40&scenario=x`), 400, path, { fields: ['scenario'] });
    assert.equal(
      messageOf(body, 'scenario'),
      "Invalid enum value. Expected 'low' | 'medium' | 'high' | 'having_baby' | 'having_diabetes', received 'x'",
    );
    await expectProblem(await s.get(`${path}?zip=77002&age=40`), 400, path, { fields: ['scenario'] });
  });

  test('ZIP lookup: a path ZIP of the wrong shape is 400', async () => {
    const short = await expectProblem(await s.get('/v1/health/zips/1234'), 400, '/v1/health/zips/1234', {
      fields: ['zip'],
      detail: 'Invalid ZIP code format. Expected 5 digits.',
    });
    assert.equal(messageOf(short, 'zip'), 'String must contain exactly 5 characters');
    // Five characters but not digits: a pattern failure, not a length one (docs/compatibility.md#validation-messages).
    const letters = await expectProblem(await s.get('/v1/health/zips/abcde'), 400, '/v1/health/zips/abcde', { fields: ['zip'] });
    assert.equal(messageOf(letters, 'zip'), 'Invalid');
  });
});

describe('processing order: validation (step 7) before the parameter tier (step 8) and the year (step 9)', () => {
  test('a Free caller sending income alone gets the 400 for the missing household_size, not a 402', async () => {
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&income=30000`, { tier: 'free' }), 400, SEARCH, {
      fields: ['household_size'],
    });
  });

  test('a Free caller with an invalid ZIP and a Pro parameter gets the 400', async () => {
    await expectProblem(await s.get(`${SEARCH}?zip=1&age=30&issuer=lone`, { tier: 'free' }), 400, SEARCH, { fields: ['zip'] });
  });

  test('page > 1 with a cursor is a 400 on page even when the year is not loaded', async () => {
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&page=2&cursor=abc&year=2026`), 400, SEARCH, { fields: ['page'] });
  });

  test('APTC: more ages than household_size is a 400 on ages even when the year is not loaded', async () => {
    const path = '/v1/health/plans/aptc-estimate';
    await expectProblem(await s.get(`${path}?zip=77002&household_income=1&household_size=1&ages=3,4&year=2026`), 400, path, {
      fields: ['ages'],
    });
  });
});

describe('numbers beyond the double range (309+ digits parse to ±Infinity)', () => {
  const NINES = '9'.repeat(400);
  const APTC = '/v1/health/plans/aptc-estimate';

  test('every numeric parameter is range-checked, not passed on as Infinity', async () => {
    const age = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=${NINES}`), 400, SEARCH, { fields: ['age'] });
    assert.equal(messageOf(age, 'age'), 'Number must be less than or equal to 65');
    const neg = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=-${NINES}`), 400, SEARCH, { fields: ['age'] });
    assert.equal(messageOf(neg, 'age'), 'Number must be greater than or equal to 0');
    const pp = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&per_page=${NINES}`), 400, SEARCH, { fields: ['per_page'] });
    assert.equal(messageOf(pp, 'per_page'), 'Number must be less than or equal to 100');
    // No maximum in the schema: integers must still be exact, numbers finite.
    const page = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&page=${NINES}`), 400, SEARCH, { fields: ['page'] });
    assert.equal(messageOf(page, 'page'), `Number must be less than or equal to ${Number.MAX_SAFE_INTEGER}`);
    const cap = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&max_premium=${NINES}.5`), 400, SEARCH, {
      fields: ['max_premium'],
    });
    assert.equal(messageOf(cap, 'max_premium'), 'Number must be finite');
    await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&year=${NINES}`), 400, SEARCH, { fields: ['year'] });
  });

  test('APTC: a huge income is a 400, not a 500; a huge age in the list is reported at its index', async () => {
    const income = await expectProblem(await s.get(`${APTC}?zip=77002&household_income=${NINES}&household_size=1&ages=40`), 400, APTC, {
      fields: ['household_income'],
    });
    assert.equal(messageOf(income, 'household_income'), 'Number must be less than or equal to 10000000');
    await expectProblem(await s.get(`${APTC}?zip=77002&household_income=30000&household_size=2&ages=40,${NINES}`), 400, APTC, {
      fields: ['ages.1'],
    });
    await expectProblem(await s.get(`${APTC}?zip=77002&household_income=30000&household_size=${NINES}&ages=40`), 400, APTC, {
      fields: ['household_size'],
    });
  });
});

describe('path parameters are not query parameters', () => {
  // Decision: a path parameter repeated in the query is a 400 on the query parameter, so neither copy
  // wins silently and the ETag and cache key can only ever describe the path's resource.
  test('plan_id in the query of a plan URL is refused, whatever its value', async () => {
    const path = '/v1/health/plans/11111TX0010001-01';
    const body = await expectProblem(await s.get(`${path}?plan_id=11111TX0010002-01`), 400, path, { fields: ['plan_id'] });
    assert.equal(messageOf(body, 'plan_id'), 'Is not a query parameter of this endpoint (it is part of the path)');
    await expectProblem(await s.get(`${path}?plan_id=11111TX0010001-01`), 400, path, { fields: ['plan_id'] });
    const oop = `${path}/oop-estimate`;
    await expectProblem(await s.get(`${oop}?zip=77002&age=40&scenario=low&plan_id=11111TX0010002-01`), 400, oop, { fields: ['plan_id'] });
  });

  test('zip in the query of a ZIP URL is refused with its own detail, not the ZIP format sentence', async () => {
    for (const path of ['/v1/health/zips/77002', '/v1/health/zip/77002']) {
      const body = await expectProblem(await s.get(`${path}?zip=99501`), 400, path, { fields: ['zip'] });
      assert.equal(body.detail, 'Invalid zip: Is not a query parameter of this endpoint (it is part of the path).');
    }
    await expectOk(await s.get('/v1/health/zips/77002?year=2025'), 'lookupZip');
  });
});

describe('location errors', () => {
  test('county_fips that is not part of the ZIP is a 400 on county_fips', async () => {
    const body = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&county_fips=48157`), 400, SEARCH, { fields: ['county_fips'] });
    assert.equal(messageOf(body, 'county_fips'), 'County 48157 is not part of ZIP 77002');
    await expectProblem(
      await s.get('/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01&zip=77002&age=30&county_fips=48157'),
      400,
      '/v1/health/plans/compare',
      { fields: ['county_fips'] },
    );
    await expectProblem(
      await s.get('/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=1&ages=30&county_fips=48157'),
      400,
      '/v1/health/plans/aptc-estimate',
      { fields: ['county_fips'] },
    );
  });

  test('an unknown ZIP is 404 ZIP code 00000 not found. on every endpoint that takes one', async () => {
    const detail = 'ZIP code 00000 not found.';
    await expectProblem(await s.get(`${SEARCH}?zip=00000&age=30`), 404, SEARCH, { detail });
    await expectProblem(await s.get('/v1/health/zips/00000'), 404, '/v1/health/zips/00000', { detail });
    await expectProblem(await s.get('/v1/health/zip/00000'), 404, '/v1/health/zip/00000', { detail });
    await expectProblem(
      await s.get('/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01&zip=00000&age=30'),
      404,
      '/v1/health/plans/compare',
      { detail },
    );
    await expectProblem(
      await s.get('/v1/health/plans/11111TX0010001-01/oop-estimate?zip=00000&age=30&scenario=low'),
      404,
      '/v1/health/plans/11111TX0010001-01/oop-estimate',
      { detail },
    );
    await expectProblem(
      await s.get('/v1/health/plans/aptc-estimate?zip=00000&household_income=30000&household_size=1&ages=30'),
      404,
      '/v1/health/plans/aptc-estimate',
      { detail },
    );
    // A territory left out of the build is unknown as well.
    await expectProblem(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.puertoRico}`), 404, `/v1/health/zips/${FIXTURE_ZIPS.puertoRico}`, {
      detail: `ZIP code ${FIXTURE_ZIPS.puertoRico} not found.`,
    });
  });

  test('a state without plan data: search 404 names state and year; ZIP lookup and APTC still work', async () => {
    await expectProblem(await s.get(`${SEARCH}?zip=${FIXTURE_ZIPS.honolulu}&age=30`), 404, SEARCH, {
      detail: 'No plan data for HI in 2025.',
    });
    await expectProblem(
      await s.get(`/v1/health/plans/compare?ids=44444AK0040001-01,44444AK0040002-01&zip=${FIXTURE_ZIPS.honolulu}&age=30`),
      404,
      '/v1/health/plans/compare',
      {
        detail: 'No plan data for HI in 2025.',
      },
    );
    const zip = await expectOk(await s.get(`/v1/health/zips/${FIXTURE_ZIPS.honolulu}`), 'lookupZip');
    assert.equal(zip.locations[0].state, 'HI');
    const aptc = await expectOk(
      await s.get(`/v1/health/plans/aptc-estimate?zip=${FIXTURE_ZIPS.honolulu}&household_income=40000&household_size=1&ages=40`),
      'calculateAptc',
    );
    assert.equal(aptc.location.state, 'HI');
    assert.ok(aptc.benchmark_premium > 0);
  });
});

describe('year', () => {
  const notLoaded = 'Year 2026 is not available. Available years: 2025';
  const cases: Array<[string, string]> = [
    [`${SEARCH}?zip=77002&age=30&year=2026`, SEARCH],
    ['/v1/health/plans/11111TX0010001-01?year=2026', '/v1/health/plans/11111TX0010001-01'],
    ['/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01&zip=77002&age=30&year=2026', '/v1/health/plans/compare'],
    [
      '/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=30&scenario=low&year=2026',
      '/v1/health/plans/11111TX0010001-01/oop-estimate',
    ],
    [
      '/v1/health/plans/aptc-estimate?zip=77002&household_income=30000&household_size=1&ages=30&year=2026',
      '/v1/health/plans/aptc-estimate',
    ],
    ['/v1/health/zips/77002?year=2026', '/v1/health/zips/77002'],
    ['/v1/health/issuers?state=TX&year=2026', '/v1/health/issuers'],
  ];
  for (const [path, instance] of cases) {
    test(`a valid but unloaded year is a 400 on year listing the available years: ${instance}`, async () => {
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['year'], instance });
      assert.equal(messageOf(body, 'year'), notLoaded);
    });
  }

  test('a year outside 2014–2030 is a range error', async () => {
    const low = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&year=2013`), 400, SEARCH, { fields: ['year'] });
    assert.equal(messageOf(low, 'year'), 'Number must be greater than or equal to 2014');
    const high = await expectProblem(await s.get(`${SEARCH}?zip=77002&age=30&year=2031`), 400, SEARCH, { fields: ['year'] });
    assert.equal(messageOf(high, 'year'), 'Number must be less than or equal to 2030');
  });

  test('the loaded year given explicitly is accepted and echoed', async () => {
    const body = await expectOk(await s.get(`${SEARCH}?zip=77002&age=30&year=2025`), 'searchPlans');
    assert.equal(body.plan_year, 2025);
    assert.equal(body._links.self.href, 'http://api.test/v1/health/plans?zip=77002&age=30&year=2025');
  });
});

describe('plans that do not exist or are not sold here', () => {
  test('an unknown plan is 404 with the documented detail and instance', async () => {
    const path = '/v1/health/plans/99999XX0000000-00';
    const body = await expectProblem(await s.get(path), 404, path, { detail: 'Plan 99999XX0000000-00 not found.' });
    assert.equal(body.title, 'Not Found');
    // A malformed id is simply not found (no 400 documented for plan detail).
    await expectProblem(await s.get('/v1/health/plans/not-a-plan'), 404, '/v1/health/plans/not-a-plan', {
      detail: 'Plan not-a-plan not found.',
    });
    await expectProblem(
      await s.get('/v1/health/plans/99999XX0000000-00/oop-estimate?zip=77002&age=30&scenario=low'),
      404,
      '/v1/health/plans/99999XX0000000-00/oop-estimate',
      {
        detail: 'Plan 99999XX0000000-00 not found.',
      },
    );
  });

  test('compare with 1 or 5 ids is refused on ids', async () => {
    const path = '/v1/health/plans/compare';
    const one = await expectProblem(await s.get(`${path}?ids=11111TX0010001-01&zip=77002&age=30`), 400, path, { fields: ['ids'] });
    assert.equal(messageOf(one, 'ids'), 'Array must contain at least 2 element(s)');
    const five = ['11111TX0010001-01', '11111TX0010002-01', '11111TX0010003-01', '11111TX0010004-01', '22222TX0020001-01'].join(',');
    const many = await expectProblem(await s.get(`${path}?ids=${five}&zip=77002&age=30`), 400, path, { fields: ['ids'] });
    assert.equal(messageOf(many, 'ids'), 'Array must contain at most 4 element(s)');
  });

  test('compare with duplicate ids is refused, also when one is the 14-character form', async () => {
    const path = '/v1/health/plans/compare';
    const a = await expectProblem(await s.get(`${path}?ids=11111TX0010001-01,11111TX0010001-01&zip=77002&age=30`), 400, path, {
      fields: ['ids'],
    });
    assert.equal(messageOf(a, 'ids'), 'Plan IDs must be distinct');
    await expectProblem(await s.get(`${path}?ids=11111TX0010001,11111TX0010001-01&zip=77002&age=30`), 400, path, { fields: ['ids'] });
  });

  test('compare with an unknown id is 404 naming it', async () => {
    const path = '/v1/health/plans/compare';
    await expectProblem(await s.get(`${path}?ids=11111TX0010001-01,99999XX0000000-00&zip=77002&age=30`), 404, path, {
      detail: 'Plan 99999XX0000000-00 not found.',
    });
  });

  test('compare with a plan not offered at the location is a 404 naming plan and ZIP, as OOP', async () => {
    const path = '/v1/health/plans/compare';
    // Montgomery County (77301) is served by the whole-state issuer 22222 only.
    await expectProblem(await s.get(`${path}?ids=22222TX0020001-01,11111TX0010001-01&zip=${FIXTURE_ZIPS.montgomery}&age=30`), 404, path, {
      detail: 'Plan 11111TX0010001-01 is not offered in ZIP 77301.',
    });
    // A plan of another state.
    await expectProblem(await s.get(`${path}?ids=22222TX0020001-01,44444AK0040001-01&zip=77002&age=30`), 404, path, {
      detail: 'Plan 44444AK0040001-01 is not offered in ZIP 77002.',
    });
  });

  test('OOP for a plan not sold at the ZIP is a 404 naming plan and ZIP', async () => {
    const path = '/v1/health/plans/11111TX0010001-01/oop-estimate';
    const body = await expectProblem(await s.get(`${path}?zip=99501&age=30&scenario=low`), 404, path);
    assert.equal(body.detail, 'Plan 11111TX0010001-01 is not offered in ZIP 99501.');
  });

  test('compare with an empty entry in ids is a 400 on that entry', async () => {
    const path = '/v1/health/plans/compare';
    await expectProblem(await s.get(`${path}?ids=22222TX0020001-01,,22222TX0020002-01&zip=${FIXTURE_ZIPS.montgomery}&age=30`), 400, path, {
      fields: ['ids.1'],
    });
  });

  test('a child-only plan is offered to children, not to adults', async () => {
    const ids = async (age: number): Promise<string[]> => {
      const body = (await (await s.get(`/v1/health/plans?zip=${FIXTURE_ZIPS.montgomery}&age=${age}&per_page=100`)).json()) as {
        _embedded: { plans: Array<{ id: string }> };
      };
      return body._embedded.plans.map((p) => p.id);
    };
    assert.ok((await ids(10)).includes('22222TX0020003-01'), 'listed for a 10-year-old');
    assert.ok((await ids(20)).includes('22222TX0020003-01'), 'listed for a 20-year-old');
    assert.ok(!(await ids(21)).includes('22222TX0020003-01'), 'not listed for a 21-year-old');
    assert.ok(!(await ids(45)).includes('22222TX0020003-01'), 'not listed for a 45-year-old');
  });
});

describe('pricing rules visible through search', () => {
  const premiums = async (q: string): Promise<Map<string, number>> => {
    const body = await expectOk(await s.get(`${SEARCH}?${q}`), 'searchPlans', q);
    return new Map(body._embedded.plans.map((p: { id: string; premium: number }) => [p.id, p.premium]));
  };

  test('ages 0 to 14 share the child rate; 15 differs', async () => {
    const at0 = await premiums('zip=77002&age=0&metal_level=silver');
    assert.ok(at0.size > 0);
    for (const age of [1, 7, 14]) assert.deepEqual(await premiums(`zip=77002&age=${age}&metal_level=silver`), at0, `age ${age}`);
    assert.notDeepEqual(await premiums('zip=77002&age=15&metal_level=silver'), at0);
  });

  test('age 65 is priced as 64; 63 differs', async () => {
    const at64 = await premiums('zip=77002&age=64');
    assert.deepEqual(await premiums('zip=77002&age=65'), at64);
    assert.notDeepEqual(await premiums('zip=77002&age=63'), at64);
  });

  test('catastrophic plans are listed under 30 only, unless metal_level=catastrophic is asked for', async () => {
    const CAT = '11111TX0010005-01';
    assert.ok((await premiums('zip=77002&age=29')).has(CAT), 'listed at 29');
    assert.ok(!(await premiums('zip=77002&age=30')).has(CAT), 'not listed at 30');
    assert.ok(!(await premiums('zip=77002&age=50&per_page=100')).has(CAT), 'not listed at 50');
    const explicit = await premiums('zip=77002&age=50&metal_level=catastrophic');
    assert.deepEqual([...explicit.keys()], [CAT]);
  });
});

describe('malformed percent-escapes in path parameters', () => {
  test('are answered like any other bad value and do not bring the server down', async () => {
    await expectProblem(await s.get('/v1/health/zips/%ZZ'), 400, '/v1/health/zips/%ZZ', { fields: ['zip'] });
    await expectProblem(await s.get('/v1/health/plans/%E0%A4%A'), 404, '/v1/health/plans/%E0%A4%A');
    await expectProblem(
      await s.get('/v1/health/plans/%ZZ/oop-estimate?zip=77002&age=30&scenario=low'),
      404,
      '/v1/health/plans/%ZZ/oop-estimate',
    );
    await expectOk(await s.get('/v1/health/years'), 'getAvailableYears');
  });

  test('well-formed escapes are decoded', async () => {
    const body = await expectOk(await s.get('/v1/health/zips/%37%37%30%30%32'), 'lookupZip');
    assert.equal(body.zip, '77002');
  });
});

describe('routing, methods and content negotiation', () => {
  test('an unknown path is 404 without any key and does not need one', async () => {
    await expectProblem(await s.get('/v1/health/foo', { tier: null }), 404, '/v1/health/foo', {
      detail: 'No route matches /v1/health/foo.',
    });
    await expectProblem(await s.get('/v2/anything'), 404, '/v2/anything', { detail: 'No route matches /v2/anything.' });
  });

  for (const method of ['POST', 'DELETE', 'PUT', 'PATCH']) {
    test(`${method} on a known path is 405 with Allow: GET, HEAD`, async () => {
      for (const path of [
        '/v1/health/plans',
        '/v1/health/plans/11111TX0010001-01',
        '/v1/health/years',
        '/v1/health/zip/77002',
        '/v1/openapi.json',
        '/healthz',
        '/problems/validation-error',
      ]) {
        const res = await s.get(path, { method, tier: null });
        assert.equal(res.headers.get('allow'), 'GET, HEAD', `${method} ${path}`);
        await expectProblem(res, 405, path, { detail: `Method ${method} is not allowed. Allowed: GET, HEAD.` });
      }
    });
  }

  test('Accept that excludes JSON is 406, before authentication', async () => {
    const path = '/v1/health/years';
    for (const accept of ['text/html', 'application/json;q=0', 'application/xml, text/*;q=0.5']) {
      await expectProblem(await s.get(path, { headers: { accept } }), 406, path, {
        detail: 'This resource is available as application/json only.',
      });
      await expectProblem(await s.get(path, { headers: { accept }, tier: null }), 406, path);
    }
  });

  test('Accept variants that admit JSON are served', async () => {
    for (const accept of [
      '*/*',
      'application/*',
      'application/json',
      'application/hal+json',
      'application/problem+json',
      'text/html, application/json;q=0.1',
      'application/json; charset=utf-8',
    ]) {
      await expectOk(await s.get('/v1/health/years', { headers: { accept } }), 'getAvailableYears', accept);
    }
  });
});

describe('unknown query parameters', () => {
  const PLAN = '11111TX0010001-01';
  const endpoints = [
    `${SEARCH}?zip=77002&age=40`,
    `/v1/health/plans/${PLAN}?year=2025`,
    `/v1/health/plans/compare?ids=${PLAN},22222TX0020001-01&zip=77002&age=40`,
    `/v1/health/plans/${PLAN}/oop-estimate?zip=77002&age=40&scenario=low`,
    '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=1&ages=40',
    '/v1/health/plans/crosswalk?plan_id=11111TX0010001&year=2025&state=TX',
    '/v1/health/zips/77002?year=2025',
    '/v1/health/zip/77002?year=2025',
    '/v1/health/issuers?state=TX',
    '/v1/health/years?',
  ];
  for (const url of endpoints) {
    test(`${url.split('?')[0]}: an unknown name is a 400 naming it, never ignored`, async () => {
      const path = url.endsWith('?') ? `${url}bogus=1` : `${url}&bogus=1`;
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['bogus'], detail: /^Unknown parameter bogus/ });
      assert.match(messageOf(body, 'bogus'), /^Unknown parameter \((valid: [a-z_, ]+|this endpoint takes no query parameters)\)$/);
    });
  }

  test('a misspelled filter gets the closest name; a HEAD gets the same status without a body', async () => {
    const path = `${SEARCH}?zip=77002&age=40&metal=silver`;
    const body = await expectProblem(await s.get(path), 400, path, { fields: ['metal'] });
    assert.equal(body.detail, 'Unknown parameter metal (did you mean metal_level?).');
    assert.equal(messageOf(body, 'metal'), 'Unknown parameter (did you mean metal_level?)');
    const typo = `${SEARCH}?zip=77002&age=40&max_premim=300`;
    assert.equal(
      messageOf(await expectProblem(await s.get(typo), 400, typo), 'max_premim'),
      'Unknown parameter (did you mean max_premium?)',
    );
    const head = await s.get(path, { method: 'HEAD' });
    assert.equal(head.status, 400);
    assert.equal(await head.text(), '');
  });

  test('every name is reported at once, each once, with the other errors', async () => {
    const path = `${SEARCH}?zip=7700&age=40&foo=1&foo=2&bar=3`;
    const body = await expectProblem(await s.get(path), 400, path, { fields: ['foo', 'bar', 'zip'] });
    assert.equal(body.detail, 'Invalid input.');
  });

  test('a key or a cache-buster in the query is refused with the reason, on GET and HEAD alike', async () => {
    const key = `${SEARCH}?zip=77002&age=40&api_key=hpd_${'0'.repeat(40)}`;
    const body = await expectProblem(await s.get(key), 400, key, { fields: ['api_key'] });
    assert.equal(
      body.detail,
      'Unknown parameter api_key: credentials are read only from the Authorization header (Authorization: Bearer <key>).',
    );
    const busted = `${SEARCH}?zip=77002&age=40&_=1732480000000`;
    assert.equal(
      messageOf(await expectProblem(await s.get(busted), 400, busted, { fields: ['_'] }), '_'),
      'Unknown parameter: cache-busting parameters are not taken: responses are already revalidated (Cache-Control: no-cache, ETag)',
    );
    assert.equal((await s.get(busted, { method: 'HEAD' })).status, 400);
  });

  test('without an Authorization header, a key sent in the query is named in the 401', async () => {
    const path = `${SEARCH}?zip=77002&age=40&api_key=hpd_${'0'.repeat(40)}`;
    const res = await s.get(path, { tier: null });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="health-api"', 'the challenge of a missing credential');
    const body = await expectProblem(res, 401, path);
    assert.equal(
      body.detail,
      'Missing or invalid API key. The query parameter api_key is not read: send the key in the Authorization header (Authorization: Bearer <key>).',
    );
    const plain = `${SEARCH}?zip=77002&age=40`;
    assert.equal((await expectProblem(await s.get(plain, { tier: null }), 401, plain)).detail, 'Missing or invalid API key.');
  });

  test('the documented aliases are not unknown', async () => {
    await expectOk(await s.get(`${SEARCH}?zip=77002&age=40&page_size=2&sort=premium&order=desc`), 'searchPlans', 'search aliases');
    await expectOk(
      await s.get('/v1/health/plans/aptc-estimate?zip=77002&income=40000&household_size=1&ages=40'),
      'calculateAptc',
      'aptc income alias',
    );
  });
});
