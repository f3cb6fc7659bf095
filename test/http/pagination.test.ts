/**
 * @module Search pagination through a real server (docs/compatibility.md#plan-search): walking `_links.next` (keyset
 * cursors) yields exactly the sequence of the offset pages, in the documented order, for every sort,
 * direction, page size and a few filters; cursors are bound to their query.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BASE, expectOk, expectProblem, messageOf, pathOf, type Body } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let s: FixtureServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-pages-'));
  const buildsRoot = await buildFixture(dir);
  s = await startFixtureServer({ buildsRoot, stateDir: join(dir, 'state') });
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SEARCH = '/v1/health/plans';
type Plan = {
  id: string;
  name: string;
  premium: number;
  deductible: { individual: number | null };
  max_out_of_pocket: { individual: number | null };
};
type SortBy = 'premium' | 'deductible' | 'max_oop' | 'name';

function keyOf(p: Plan, sortBy: SortBy): number | string | null {
  switch (sortBy) {
    case 'premium':
      return p.premium;
    case 'deductible':
      return p.deductible.individual;
    case 'max_oop':
      return p.max_out_of_pocket.individual;
    case 'name':
      return p.name.toLowerCase();
  }
}

/** Sorted by the key (nulls last), ties by id ascending, in both directions. */
function assertOrdered(plans: readonly Plan[], sortBy: SortBy, desc: boolean, label: string): void {
  for (let i = 1; i < plans.length; i++) {
    const a = plans[i - 1]!;
    const b = plans[i]!;
    const ka = keyOf(a, sortBy);
    const kb = keyOf(b, sortBy);
    if (ka === kb) {
      assert.ok(a.id < b.id, `${label}: tie ${String(ka)} broken by id ascending (${a.id}, ${b.id})`);
      continue;
    }
    if (kb === null) continue;
    assert.ok(ka !== null, `${label}: nulls last`);
    assert.ok(desc ? ka > kb : ka < kb, `${label}: ${a.id} (${String(ka)}) before ${b.id} (${String(kb)})`);
  }
}

/** Same target and same parameters, in the order of the endpoint's table (docs/compatibility.md#hal-links), not the request's. */
function assertSameLink(actual: string | undefined, expected: string, label: string): void {
  assert.ok(actual !== undefined, `${label}: link present`);
  const norm = (href: string) => {
    const u = new URL(href);
    return [u.origin + u.pathname, [...u.searchParams].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))];
  };
  assert.deepEqual(norm(actual), norm(expected), label);
}

async function page(path: string, label: string): Promise<Body> {
  return expectOk(await s.get(path), 'searchPlans', label);
}

/** Offset pages 1..last, checking the offset-mode envelope and links. */
async function offsetWalk(q: string, perPage: number): Promise<{ plans: Plan[]; total: number }> {
  const first = await page(`${SEARCH}?${q}&per_page=${perPage}&page=1`, q);
  const total = first.total as number;
  assert.equal(typeof total, 'number');
  const last = Math.max(1, Math.ceil(total / perPage));
  const plans: Plan[] = [];
  for (let k = 1; k <= last; k++) {
    const body = k === 1 ? first : await page(`${SEARCH}?${q}&per_page=${perPage}&page=${k}`, `${q} page ${k}`);
    assert.equal(body.total, total, `${q} page ${k}: total`);
    assert.equal(body.page, k);
    assert.equal(body.per_page, perPage);
    assert.ok(body._embedded.plans.length <= perPage);
    assertSameLink(body._links.last?.href, `${BASE}${SEARCH}?${q}&per_page=${perPage}&page=${last}`, 'last');
    assertSameLink(body._links.first?.href, `${BASE}${SEARCH}?${q}&per_page=${perPage}&page=1`, 'first');
    if (k > 1) assertSameLink(body._links.prev?.href, `${BASE}${SEARCH}?${q}&per_page=${perPage}&page=${k - 1}`, 'prev');
    else assert.equal(body._links.prev, undefined);
    if (k < last) {
      assert.ok(body._links.next !== undefined, `${q} page ${k}: next`);
      assertSameLink(
        body._links.next.href,
        `${BASE}${SEARCH}?${q}&per_page=${perPage}&cursor=${body.next_cursor}`,
        'next carries the cursor',
      );
    } else {
      assert.equal(body._links.next, undefined);
      assert.equal(body.next_cursor, undefined);
    }
    plans.push(...body._embedded.plans);
  }
  return { plans, total };
}

/** Page 1, then `_links.next` until it disappears, checking the cursor-mode envelope. */
async function cursorWalk(q: string, perPage: number, limit: number): Promise<Plan[]> {
  let body = await page(`${SEARCH}?${q}&per_page=${perPage}`, q);
  const plans: Plan[] = [...body._embedded.plans];
  let hops = 0;
  while (body._links.next !== undefined) {
    assert.ok(++hops <= limit, `${q}: the walk ends`);
    assert.equal(typeof body.next_cursor, 'string');
    const next = pathOf(body._links.next.href);
    assert.ok(next.includes(`cursor=${body.next_cursor}`));
    body = await page(next, `${q} hop ${hops}`);
    assert.equal(body.total, null, 'cursor pages have no total');
    assert.equal(body.page, null, 'cursor pages have no page number');
    assert.equal(body.per_page, perPage);
    assert.equal(body._links.prev, undefined, 'no prev in cursor mode');
    assert.equal(body._links.last, undefined, 'no last in cursor mode');
    assert.ok(body._links.first.href.endsWith('&page=1'));
    assertSameLink(body._links.self.href, `${BASE}${next}`, 'self names the request');
    plans.push(...body._embedded.plans);
  }
  assert.equal(body.next_cursor, undefined, 'no next_cursor on the last page');
  return plans;
}

const QUERIES: string[] = [];
for (const sortBy of ['premium', 'deductible', 'max_oop', 'name'] as const) {
  for (const order of ['asc', 'desc'] as const) QUERIES.push(`zip=77002&age=25&sort_by=${sortBy}&sort_order=${order}`);
}
QUERIES.push(
  'zip=77002&age=40',
  'zip=77477&age=40&sort_by=max_oop&sort_order=desc',
  'zip=77477&age=40&county_fips=48201&sort_by=name',
  'zip=77002&age=40&metal_level=silver&sort_by=deductible&sort_order=desc',
  'zip=77002&age=40&issuer=lone&sort_by=max_oop',
  'zip=77002&age=40&max_deductible=6000&sort_by=premium&sort_order=desc',
  'zip=77002&age=40&plan_type=hmo',
  // A cost-sharing-reduction view sorted by the variants' deductibles (the one re-sorted order).
  'zip=77002&age=40&income=18072&household_size=1&sort_by=deductible',
  'zip=77002&age=40&income=18072&household_size=1&sort_by=max_oop&sort_order=desc',
  'zip=99501&age=64&sort_by=name&sort_order=desc',
);

describe('walking _links.next equals concatenating the offset pages', () => {
  for (const q of QUERIES) {
    test(q, async () => {
      const sortBy = (/sort_by=(\w+)/.exec(q)?.[1] ?? 'premium') as SortBy;
      const desc = q.includes('sort_order=desc');
      const all = await page(`${SEARCH}?${q}&per_page=100`, q);
      assert.ok(all.total >= 2, `${q}: enough plans to page (${all.total})`);
      const reference = (all._embedded.plans as Plan[]).map((p) => p.id);
      assertOrdered(all._embedded.plans, sortBy, desc, q);
      for (const perPage of [1, 2, 3]) {
        const offset = await offsetWalk(q, perPage);
        const walked = await cursorWalk(q, perPage, offset.total + 1);
        const offsetIds = offset.plans.map((p) => p.id);
        const walkedIds = walked.map((p) => p.id);
        assert.deepEqual(walkedIds, offsetIds, `${q} per_page=${perPage}: cursor walk = offset pages`);
        assert.deepEqual(offsetIds, reference, `${q} per_page=${perPage}: same sequence as one big page`);
        assert.equal(new Set(walkedIds).size, walkedIds.length, 'no duplicates');
        assert.equal(walkedIds.length, offset.total, 'no gaps');
        assertOrdered(walked, sortBy, desc, `${q} per_page=${perPage}`);
      }
    });
  }

  test('ties are broken by id ascending in both directions (several plans share a 9,200 MOOP)', async () => {
    for (const order of ['asc', 'desc']) {
      const body = await page(`${SEARCH}?zip=77002&age=25&sort_by=max_oop&sort_order=${order}&per_page=100`, order);
      const tied = (body._embedded.plans as Plan[]).filter((p) => p.max_out_of_pocket.individual === 9200).map((p) => p.id);
      assert.ok(tied.length >= 3, `several ties (${tied.length})`);
      assert.deepEqual(tied, [...tied].sort(), `${order}: ties by id ascending`);
    }
  });

  test('the CSR view pages silver plans as their -06 variants', async () => {
    const walked = await cursorWalk('zip=77002&age=40&income=18072&household_size=1&sort_by=deductible', 2, 20);
    const silver = walked.filter((p) => p.id.startsWith('11111TX0010001') || p.id.startsWith('22222TX0020001'));
    assert.ok(silver.length === 2 && silver.every((p) => p.id.endsWith('-06') && p.deductible.individual === 500));
  });
});

describe('offset mode edges', () => {
  test('a page past the end is an empty page with the total, prev pointing at the last page', async () => {
    const body = await page(`${SEARCH}?zip=77002&age=40&per_page=3&page=99`, 'past the end');
    assert.deepEqual(body._embedded.plans, []);
    assert.equal(body.page, 99);
    const last = Math.ceil(body.total / 3);
    assert.equal(body._links.prev.href, `${BASE}${SEARCH}?zip=77002&age=40&per_page=3&page=${last}`);
    assert.equal(body._links.next, undefined);
  });

  test('page_size is accepted as per_page and echoed in the envelope; self rewrites it', async () => {
    const body = await page(`${SEARCH}?zip=77002&age=40&page_size=2`, 'page_size');
    assert.equal(body.per_page, 2);
    assert.equal(body.page_size, 2);
    assert.equal(body._embedded.plans.length, 2);
    assert.equal(body._links.self.href, `${BASE}${SEARCH}?zip=77002&age=40&per_page=2`);
    const plain = await page(`${SEARCH}?zip=77002&age=40&per_page=2`, 'per_page');
    assert.equal(plain.page_size, undefined);
  });

  test('self echoes the request in table order, aliases rewritten, defaults not added', async () => {
    const body = await page(`${SEARCH}?per_page=2&sort=premium&age=35&order=desc&zip=77002`, 'echo');
    assert.equal(body._links.self.href, `${BASE}${SEARCH}?zip=77002&age=35&sort_by=premium&sort_order=desc&per_page=2`);
    assert.equal(body._links.first.href, `${BASE}${SEARCH}?zip=77002&age=35&sort_by=premium&sort_order=desc&per_page=2&page=1`);
  });

  test('the default page size is 25', async () => {
    const body = await page(`${SEARCH}?zip=77002&age=20`, 'default');
    assert.equal(body.per_page, 25);
  });
});

describe('cursors are bound to their query', () => {
  let cursor: string;
  before(async () => {
    const body = await page(`${SEARCH}?zip=77002&age=35&per_page=2`, 'cursor source');
    cursor = body.next_cursor;
    assert.equal(typeof cursor, 'string');
  });

  test('the same query with another page size may continue', async () => {
    const body = await page(`${SEARCH}?zip=77002&age=35&per_page=3&cursor=${cursor}`, 'other per_page');
    assert.equal(body.total, null);
  });

  for (const q of [
    'zip=77002&age=36',
    'zip=77002&age=35&sort_order=desc',
    'zip=77002&age=35&sort_by=name',
    'zip=77002&age=35&metal_level=silver',
    'zip=77003&age=35',
    'zip=77002&age=35&income=30000&household_size=1',
  ]) {
    test(`replayed with ${q}: 400 on cursor`, async () => {
      const path = `${SEARCH}?${q}&per_page=2&cursor=${cursor}`;
      const body = await expectProblem(await s.get(path), 400, path, { fields: ['cursor'] });
      // What went wrong and what to do, not "Invalid cursor: Invalid cursor.".
      assert.match(
        messageOf(body, 'cursor'),
        /^Issued for another query \(other filters or sort\): send it with the parameters of the request that returned it, or drop it/,
      );
      assert.match(body.detail, /^Invalid cursor: Issued for another query/);
    });
  }

  for (const garbage of [
    'abc',
    'eyJpZCI6MTB9',
    '!!!',
    Buffer.from('{"v":1,"k":[1,"x"],"f":"nope"}').toString('base64url'),
    `${'A'.repeat(600)}`,
  ]) {
    test(`a garbage cursor is refused: ${garbage.slice(0, 24)}`, async () => {
      const path = `${SEARCH}?zip=77002&age=35&cursor=${encodeURIComponent(garbage)}`;
      await expectProblem(await s.get(path), 400, path, { fields: ['cursor'] });
    });
  }

  test('a cursor naming a plan that is not in the result is refused', async () => {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v: number; k: [unknown, string]; f: string };
    const forged = Buffer.from(JSON.stringify({ ...decoded, k: [decoded.k[0], '99999XX0000000'] })).toString('base64url');
    const path = `${SEARCH}?zip=77002&age=35&per_page=2&cursor=${forged}`;
    await expectProblem(await s.get(path), 400, path, { fields: ['cursor'] });
  });
});
