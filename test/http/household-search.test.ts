/**
 * @module Plan search priced for a household, checked against other endpoints rather than
 * the engine: a plan's household premium is the sum of its single-age searched premiums over the members
 * charged (the three-child rule), its premium_with_credit that total less the APTC estimate's credit for
 * the same household, and the order, pages, cursors, filters and stats are those of the totals.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fixtureCreditCents } from '../helpers/fixture-credit.ts';
import { FIXTURE_PLANS, FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, expectProblem, messageOf, pathOf, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-household-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ZIP = FIXTURE_ZIPS.harris;
const plansOf = (body: Body): Body[] => (body._embedded as { plans: Body[] }).plans;
const cents = (dollars: unknown): number => Math.round(Number(dollars) * 100);

const search = async (query: string): Promise<Body> => expectOk(await s.get(`/v1/health/plans?${query}`), 'searchPlans', query);

/** Every plan a single-age search lists (catastrophic included): id → premium in cents. */
async function singleAge(age: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const metal of ['', '&metal_level=catastrophic']) {
    for (const p of plansOf(await search(`zip=${ZIP}&age=${age}&per_page=100${metal}`))) out.set(String(p.id), cents(p.premium));
  }
  return out;
}

/** What each plan should cost the household: the sum over the charged ages; plans not sold at some age drop out. */
async function expectedTotals(ages: readonly number[], charged: readonly boolean[]): Promise<Map<string, number>> {
  const byAge = await Promise.all(ages.map((a) => singleAge(a)));
  const out = new Map<string, number>();
  for (const id of byAge[0]!.keys()) {
    if (!byAge.every((m) => m.has(id))) continue;
    out.set(
      id,
      ages.reduce((sum, _a, i) => sum + (charged[i] ? byAge[i]!.get(id)! : 0), 0),
    );
  }
  return out;
}

describe('household search', () => {
  test('each plan’s premium is the sum of its single-age premiums over the charged members; the fourth child is free', async () => {
    const ages = [44, 41, 15, 12, 9, 4];
    const body = await search(`zip=${ZIP}&ages=${ages.join(',')}&per_page=100`);
    assert.deepEqual(body.members, [
      { age: 44, charged: true },
      { age: 41, charged: true },
      { age: 15, charged: true },
      { age: 12, charged: true },
      { age: 9, charged: true },
      { age: 4, charged: false },
    ]);
    const expected = await expectedTotals(
      ages,
      (body.members as Body[]).map((m) => m.charged === true),
    );
    const rows = plansOf(body);
    assert.ok(rows.length >= 3, 'the fixture lists several plans for this household');
    assert.equal(body.total, rows.length);
    for (const p of rows) assert.equal(cents(p.premium), expected.get(String(p.id)), String(p.id));
    // Every plan the single-age searches price at all six ages and that is not child-only is listed.
    const childOnly = new Set(FIXTURE_PLANS.filter((p) => p.childOnly === true).map((p) => `${p.scid}-01`));
    const catastrophic = new Set(FIXTURE_PLANS.filter((p) => p.metal === 'Catastrophic').map((p) => `${p.scid}-01`));
    const listed = new Set(rows.map((p) => String(p.id)));
    for (const id of expected.keys()) assert.equal(listed.has(id), !childOnly.has(id) && !catastrophic.has(id), id);
    // Sorted by the total, ties by id.
    for (let i = 1; i < rows.length; i++) {
      const a = cents(rows[i - 1]!.premium);
      const b = cents(rows[i]!.premium);
      assert.ok(a < b || (a === b && String(rows[i - 1]!.id) < String(rows[i]!.id)), `order at ${i}`);
    }
  });

  test('a child-only household is offered child-only plans; catastrophic plans only when every member is under 30', async () => {
    const kids = plansOf(await search(`zip=${ZIP}&ages=10,7&per_page=100`)).map((p) => String(p.id));
    const childOnly = FIXTURE_PLANS.filter((p) => p.childOnly === true && p.state === 'TX').map((p) => `${p.scid}-01`);
    assert.ok(childOnly.length > 0);
    for (const id of childOnly) assert.ok(kids.includes(id), `${id} for children`);
    const young = plansOf(await search(`zip=${ZIP}&ages=25,3&per_page=100`)).map((p) => String(p.metal_level));
    const mixed = plansOf(await search(`zip=${ZIP}&ages=31,3&per_page=100`)).map((p) => String(p.metal_level));
    assert.ok(young.includes('catastrophic'));
    assert.ok(!mixed.includes('catastrophic'));
  });

  test('descending order, offset pages and cursors walk the same totals', async () => {
    const q = `zip=${ZIP}&ages=40,38,10`;
    const all = plansOf(await search(`${q}&per_page=100`));
    const desc = plansOf(await search(`${q}&per_page=100&sort_order=desc`));
    assert.deepEqual(
      desc.map((p) => cents(p.premium)),
      all.map((p) => cents(p.premium)).reverse(),
    );
    const byCursor: string[] = [];
    let page = await search(`${q}&per_page=2`);
    for (;;) {
      byCursor.push(...plansOf(page).map((p) => String(p.id)));
      const next = (page._links as Body).next as Body | undefined;
      if (next === undefined) break;
      page = await expectOk(await s.get(pathOf(String(next.href))), 'searchPlans');
    }
    assert.deepEqual(
      byCursor,
      all.map((p) => String(p.id)),
    );
    const second = plansOf(await search(`${q}&per_page=2&page=2`)).map((p) => String(p.id));
    assert.deepEqual(second, byCursor.slice(2, 4));
  });

  test('a cursor is bound to the household: other ages refuse it', async () => {
    const first = await search(`zip=${ZIP}&ages=40,38,10&per_page=1`);
    const cursor = String(first.next_cursor);
    await expectProblem(await s.get(`/v1/health/plans?zip=${ZIP}&ages=40,38,11&per_page=1&cursor=${cursor}`), 400, '/v1/health/plans', {
      fields: ['cursor'],
    });
    await expectProblem(await s.get(`/v1/health/plans?zip=${ZIP}&age=40&per_page=1&cursor=${cursor}`), 400, '/v1/health/plans', {
      fields: ['cursor'],
    });
  });

  test('max_premium applies to the household total', async () => {
    const all = plansOf(await search(`zip=${ZIP}&ages=40,38,10&per_page=100`));
    const cap = (cents(all[1]!.premium) + 1) / 100;
    const capped = await search(`zip=${ZIP}&ages=40,38,10&per_page=100&max_premium=${cap}`);
    assert.equal(capped.total, all.filter((p) => Number(p.premium) <= cap).length);
    assert.ok(plansOf(capped).every((p) => Number(p.premium) <= cap));
    assert.ok(plansOf(capped).length >= 2);
  });

  test('premium_with_credit is the total less the household’s APTC (not the non-EHB share); silver plans show the CSR variant', async () => {
    const household = 'ages=40,38,10&income=40000&household_size=3';
    const est = await expectOk(
      await s.get(`/v1/health/plans/aptc-estimate?zip=${ZIP}&household_income=40000&household_size=3&ages=40,38,10`),
      'calculateAptc',
    );
    const aptc = cents(est.aptc_amount);
    assert.ok(aptc > 0);
    const body = await search(`zip=${ZIP}&${household}&per_page=100`);
    const csrLevel = est.csr_level;
    for (const p of plansOf(body)) {
      const total = cents(p.premium);
      const expected = fixtureCreditCents(String(p.id), String(p.metal_level), total, aptc);
      assert.equal(cents(p.premium_with_credit), expected, String(p.id));
      if (p.metal_level === 'silver' && csrLevel !== null) assert.match(String(p.id), /-0[456]$/);
    }
    // The totals are those of the household without income.
    const plain = plansOf(await search(`zip=${ZIP}&ages=40,38,10&per_page=100`));
    assert.deepEqual(
      plansOf(body).map((p) => [String(p.id).slice(0, 14), cents(p.premium)]),
      plain.map((p) => [String(p.id).slice(0, 14), cents(p.premium)]),
    );
  });

  test('stats describe the household search: total and premium range', async () => {
    const q = `zip=${ZIP}&ages=40,38,10`;
    const rows = plansOf(await search(`${q}&per_page=100`));
    const st = await expectOk(await s.get(`/v1/health/plans/stats?${q}`), 'getPlanStats');
    assert.equal(st.total, rows.length);
    assert.equal(cents((st.ranges as Body).premium.min), cents(rows[0]!.premium));
    assert.equal(cents((st.ranges as Body).premium.max), cents(rows.at(-1)!.premium));
  });

  test('age or ages: one is required, not both; ages are bounded; a household is Pro', async () => {
    const path = '/v1/health/plans';
    let body = await expectProblem(await s.get(`${path}?zip=${ZIP}`), 400, path, { fields: ['age'] });
    assert.equal(messageOf(body, 'age'), 'Required');
    body = await expectProblem(await s.get(`${path}?age=40`), 400, path, { fields: ['zip'] });
    body = await expectProblem(await s.get(`${path}?zip=${ZIP}&age=40&ages=40,38`), 400, path, { fields: ['ages'] });
    assert.match(messageOf(body, 'ages'), /age or ages, not both/);
    await expectProblem(await s.get(`${path}?zip=${ZIP}&ages=40,70`), 400, path, { fields: ['ages.1'] });
    await expectProblem(await s.get(`${path}?zip=${ZIP}&ages=${Array(11).fill(30).join(',')}`), 400, path, { fields: ['ages'] });
    body = await expectProblem(await s.get(`${path}?zip=${ZIP}&ages=40,38,10&income=50000&household_size=2`), 400, path, {
      fields: ['ages'],
    });
    assert.equal(messageOf(body, 'ages'), 'More members than household_size');
    const free = await expectProblem(await s.get(`${path}?zip=${ZIP}&ages=40,38`, { tier: 'free' }), 402, path);
    assert.equal(free.required_tier, 'pro');
    assert.match(String(free.detail), /ages/);
  });

  test('one member given as ages is priced as that age', async () => {
    const one = plansOf(await search(`zip=${ZIP}&ages=40&per_page=100`));
    const single = plansOf(await search(`zip=${ZIP}&age=40&per_page=100`));
    assert.deepEqual(
      one.map((p) => [p.id, p.premium]),
      single.map((p) => [p.id, p.premium]),
    );
  });
});
