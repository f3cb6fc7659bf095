/**
 * @module A household priced on plan detail, compare and the OOP estimate, checked against
 * search: a plan's total there is its household search row's premium, each member's share its single-age
 * premium when charged (0 for a fourth child under 21), and premium_with_credit the total less the APTC
 * estimate's credit. Single-age requests answer without any household member.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fixtureCreditCents } from '../helpers/fixture-credit.ts';
import { FIXTURE_PLANS, FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { expectOk, expectProblem, messageOf, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-household-quotes-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ZIP = FIXTURE_ZIPS.harris;
const AGES = [44, 41, 15, 12, 9, 4];
const cents = (dollars: unknown): number => Math.round(Number(dollars) * 100);
const plansOf = (body: Body): Body[] => (body._embedded as { plans: Body[] }).plans;

async function searchRows(query: string): Promise<Map<string, Body>> {
  const body = await expectOk(await s.get(`/v1/health/plans?zip=${ZIP}&per_page=100&${query}`), 'searchPlans');
  return new Map(plansOf(body).map((p) => [String(p.id), p]));
}

/** Each member's share as the single-age searches price it. */
async function expectedMembers(
  id: string,
): Promise<Array<{ age: number; premium: number; charged: boolean; premium_basis: 'member_rate' }>> {
  return Promise.all(
    AGES.map(async (age, i) => {
      const charged = i < 5; // three oldest children of four under 21
      const row = (await searchRows(`age=${age}`)).get(id);
      assert.ok(row !== undefined, `${id} at ${age}`);
      return { age, premium: charged ? Number(row.premium) : 0, charged, premium_basis: 'member_rate' };
    }),
  );
}

describe('household quotes on detail, compare and the OOP estimate', () => {
  test('detail: the premium and member shares of a household, and its premium after the credit', async () => {
    const household = await searchRows(`ages=${AGES.join(',')}`);
    const [id, row] = [...household.entries()].find(([, p]) => p.metal_level !== 'silver')!;
    const body = await expectOk(await s.get(`/v1/health/plans/${id}?zip=${ZIP}&ages=${AGES.join(',')}`), 'getPlanById');
    assert.equal(cents(body.pricing.premium), cents(row.premium));
    assert.deepEqual(body.pricing.members, await expectedMembers(id));
    assert.equal(body.pricing.premium_with_credit, null);
    assert.equal(body.pricing.aptc_amount, null);

    const est = await expectOk(
      await s.get(`/v1/health/plans/aptc-estimate?zip=${ZIP}&household_income=45000&household_size=6&ages=${AGES.join(',')}`),
      'calculateAptc',
    );
    const credited = await expectOk(
      await s.get(`/v1/health/plans/${id}?zip=${ZIP}&ages=${AGES.join(',')}&income=45000&household_size=6`),
      'getPlanById',
    );
    assert.equal(credited.pricing.aptc_amount, est.aptc_amount);
    assert.equal(
      cents(credited.pricing.premium_with_credit),
      fixtureCreditCents(id, String(row.metal_level), cents(row.premium), cents(est.aptc_amount)),
    );
  });

  test('detail without pricing parameters answers as before: no pricing member', async () => {
    const id = `${FIXTURE_PLANS[0]!.scid}-01`;
    const body = await expectOk(await s.get(`/v1/health/plans/${id}`), 'getPlanById');
    assert.equal('pricing' in body, false);
    const single = await expectOk(await s.get(`/v1/health/plans/${id}?zip=${ZIP}&age=40`), 'getPlanById');
    const row = (await searchRows('age=40')).get(id)!;
    assert.equal(single.pricing.premium, row.premium);
    assert.deepEqual(single.pricing.members, [{ age: 40, premium: row.premium, charged: true, premium_basis: 'member_rate' }]);
  });

  test('detail pricing parameters come together', async () => {
    const id = `${FIXTURE_PLANS[0]!.scid}-01`;
    const path = `/v1/health/plans/${id}`;
    await expectProblem(await s.get(`${path}?zip=${ZIP}`), 400, path, { fields: ['age'] });
    await expectProblem(await s.get(`${path}?age=40`), 400, path, { fields: ['zip'] });
    const both = await expectProblem(await s.get(`${path}?zip=${ZIP}&age=40&ages=40,10`), 400, path, { fields: ['ages'] });
    assert.match(messageOf(both, 'ages'), /not both/);
    await expectProblem(await s.get(`${path}?zip=${ZIP}&ages=40&income=30000`), 400, path, { fields: ['household_size'] });
    await expectProblem(await s.get(`${path}?zip=${FIXTURE_ZIPS.anchorage}&age=40`), 404, path);
  });

  test('compare: household totals equal the search’s, each plan with its member breakdown', async () => {
    const household = await searchRows(`ages=${AGES.join(',')}`);
    const ids = [...household.keys()].slice(0, 3);
    const body = await expectOk(
      await s.get(`/v1/health/plans/compare?ids=${ids.join(',')}&zip=${ZIP}&ages=${AGES.join(',')}`),
      'comparePlans',
    );
    const plans = plansOf(body);
    assert.deepEqual(
      plans.map((p) => p.id),
      ids,
    );
    for (const p of plans) {
      assert.equal(p.premium, household.get(String(p.id))!.premium);
      assert.deepEqual(p.members, await expectedMembers(String(p.id)));
      assert.equal(
        cents(p.premium),
        (p.members as Body[]).reduce((sum, m) => sum + cents(m.premium), 0),
      );
    }
    // With income: the premium after the household's credit.
    const est = await expectOk(
      await s.get(`/v1/health/plans/aptc-estimate?zip=${ZIP}&household_income=45000&household_size=6&ages=${AGES.join(',')}`),
      'calculateAptc',
    );
    const credited = await expectOk(
      await s.get(`/v1/health/plans/compare?ids=${ids.join(',')}&zip=${ZIP}&ages=${AGES.join(',')}&income=45000&household_size=6`),
      'comparePlans',
    );
    for (const p of plansOf(credited)) {
      const expected = fixtureCreditCents(String(p.id), String(p.metal_level), cents(p.premium), cents(est.aptc_amount));
      assert.equal(cents(p.premium_with_credit), expected);
    }
    // One age: rows as they have always been, no member breakdown.
    const single = await expectOk(await s.get(`/v1/health/plans/compare?ids=${ids.join(',')}&zip=${ZIP}&age=40`), 'comparePlans');
    assert.ok(plansOf(single).every((p) => !('members' in p) && p.premium_with_credit === null));
  });

  test('compare refuses a plan that cannot cover the household, saying why', async () => {
    const childOnly = FIXTURE_PLANS.find((p) => p.childOnly === true && p.state === 'TX')!;
    const other = FIXTURE_PLANS.find((p) => p.state === 'TX' && p.childOnly !== true && p.metal === 'Silver')!;
    const path = '/v1/health/plans/compare';
    const body = await expectProblem(await s.get(`${path}?ids=${childOnly.scid}-01,${other.scid}-01&zip=${ZIP}&ages=40,10`), 404, path);
    assert.match(String(body.detail), /cannot cover this household/);
  });

  test('OOP estimate: twelve household premiums plus one member’s care', async () => {
    const household = await searchRows(`ages=${AGES.join(',')}`);
    const [id, row] = [...household.entries()][0]!;
    const path = `/v1/health/plans/${id}/oop-estimate`;
    const body = await expectOk(await s.get(`${path}?zip=${ZIP}&ages=${AGES.join(',')}&scenario=medium`), 'estimateOop');
    const single = await expectOk(await s.get(`${path}?zip=${ZIP}&age=44&scenario=medium`), 'estimateOop');
    assert.equal(body.monthly_premium, row.premium);
    assert.deepEqual(body.ages, AGES);
    assert.equal(body.age, null);
    assert.deepEqual(body.members, await expectedMembers(id));
    assert.equal(cents(body.breakdown.annual_premium), cents(row.premium) * 12);
    // The care part is the member's, as for one person.
    assert.equal(body.breakdown.estimated_out_of_pocket, single.breakdown.estimated_out_of_pocket);
    assert.ok((body.notes as string[]).some((n) => /household/.test(n)));
    assert.equal('ages' in single, false);
    assert.equal('members' in single, false);
  });
});
