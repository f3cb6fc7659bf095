/**
 * `searchPlans()` on the fixture build, without an operation or a server: each filter, each sort order
 * in both directions (ties in plan-id order both ways, plans without a value last both ways), offset
 * pages and keyset continuation that partition the result, the catastrophic and child-only rules, and
 * the cost-sharing-reduction view of silver plans.
 *
 * Harris County (ZIP 77002) at age 40 lists, by premium: 11111TX0010005 (catastrophic),
 * 22222TX0020002 (expanded bronze), 11111TX0010003 (bronze, HSA), 33333TX0030001, 22222TX0020001,
 * 11111TX0010001, 11111TX0010002 (silver), 11111TX0010004 (gold); 22222TX0020003 is child-only.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Dataset, openCurrentDataset } from '../../src/engine/dataset.ts';
import { type CsrOverride, type SearchFilters, type SearchPage, type SearchQuery, searchPlans } from '../../src/engine/search.ts';
import { buildFixture } from '../helpers/fixture-build.ts';

let dir: string;
let ds: Dataset;
let harris: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-search-'));
  ds = openCurrentDataset(await buildFixture(dir), 2025);
  harris = ds.resolveZip('77002')![0]!.listId;
});
after(() => {
  ds?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ADULT: SearchFilters = { includeCatastrophic: false };

function search(q: Partial<SearchQuery> = {}): SearchPage {
  return searchPlans(ds, {
    listId: harris,
    age: 40,
    sortBy: 'premium',
    descending: false,
    filters: ADULT,
    csr: null,
    pageSize: 100,
    page: 1,
    ...q,
  });
}

/** Standard component ids of a page's rows, in order. */
const ids = (page: SearchPage): string[] => page.rows.map((r) => ds.plan(r.planIndex).standardComponentId);
const filtered = (f: Omit<SearchFilters, 'includeCatastrophic'>): string[] => ids(search({ filters: { ...ADULT, ...f } }));

const BY_PREMIUM = [
  '22222TX0020002',
  '11111TX0010003',
  '33333TX0030001',
  '22222TX0020001',
  '11111TX0010001',
  '11111TX0010002',
  '11111TX0010004',
];

describe('who is listed', () => {
  test('an adult sees every plan sold to adults but the catastrophic one, cheapest first, with the total', () => {
    const page = search();
    assert.deepEqual(ids(page), BY_PREMIUM);
    assert.equal(page.total, 7);
    assert.equal(page.hasMore, false);
    const premiums = page.rows.map((r) => r.premiumCents);
    assert.deepEqual(
      premiums,
      [...premiums].sort((a, b) => a - b),
    );
  });
  test('includeCatastrophic adds the catastrophic plan in its premium place', () => {
    assert.deepEqual(ids(search({ filters: { includeCatastrophic: true } })), ['11111TX0010005', ...BY_PREMIUM]);
  });
  test('the child-only plan is priced for a child and absent for an adult', () => {
    assert.ok(ids(search({ age: 10 })).includes('22222TX0020003'));
    assert.ok(!ids(search({ age: 40 })).includes('22222TX0020003'));
  });
  test('premiums follow the age band: a 60-year-old pays more for the same plan', () => {
    const at = (age: number): number =>
      search({ age }).rows.find((r) => ds.plan(r.planIndex).standardComponentId === '11111TX0010001')!.premiumCents;
    assert.ok(at(60) > at(40), `${at(60)} > ${at(40)}`);
  });
});

describe('filters', () => {
  test('metal level, plan type, HSA eligibility (both ways), issuer substring', () => {
    assert.deepEqual(filtered({ metalLevel: 'silver' }), ['33333TX0030001', '22222TX0020001', '11111TX0010001', '11111TX0010002']);
    assert.deepEqual(filtered({ metalLevel: 'expanded bronze' }), ['22222TX0020002']);
    assert.deepEqual(filtered({ planType: 'epo' }), ['11111TX0010002']);
    assert.deepEqual(filtered({ hsaEligible: true }), ['11111TX0010003']);
    assert.deepEqual(
      filtered({ hsaEligible: false }),
      BY_PREMIUM.filter((id) => id !== '11111TX0010003'),
    );
    assert.deepEqual(filtered({ issuer: 'coast' }), ['22222TX0020002', '22222TX0020001']);
    assert.deepEqual(filtered({ issuer: 'nobody' }), []);
  });
  test('maximum premium (inclusive, dollars) and maximum deductible', () => {
    const third = search().rows[2]!.premiumCents / 100;
    assert.deepEqual(filtered({ maxPremium: third }), BY_PREMIUM.slice(0, 3));
    assert.deepEqual(filtered({ maxPremium: third - 0.01 }), BY_PREMIUM.slice(0, 2));
    assert.deepEqual(filtered({ maxDeductible: 3000 }), ['33333TX0030001', '11111TX0010002', '11111TX0010004']);
  });
  test('filters combine; the total counts matches only', () => {
    const page = search({ filters: { ...ADULT, metalLevel: 'silver', planType: 'hmo' } });
    assert.deepEqual(ids(page), ['33333TX0030001', '11111TX0010001']);
    assert.equal(page.total, 2);
  });
});

describe('sort orders', () => {
  test('deductible and name, ascending and descending', () => {
    const byDeductible = [
      '11111TX0010004',
      '33333TX0030001',
      '11111TX0010002',
      '11111TX0010001',
      '22222TX0020001',
      '22222TX0020002',
      '11111TX0010003',
    ];
    assert.deepEqual(ids(search({ sortBy: 'deductible' })), byDeductible);
    assert.deepEqual(ids(search({ sortBy: 'deductible', descending: true })), [...byDeductible].reverse());
    const names = ids(search({ sortBy: 'name' })).map((id) => ds.plan(ds.planIndex(id)!).name);
    assert.deepEqual(names, [
      'Downtown Silver',
      'Gulf Expanded Bronze',
      'Gulf Silver 5000',
      'Lone Star Bronze 7500',
      'Lone Star Gold 1000',
      'Lone Star Silver 3000',
      'Lone Star Silver 4500',
    ]);
    assert.deepEqual(ids(search({ sortBy: 'premium', descending: true })), [...BY_PREMIUM].reverse());
  });
  test('equal keys stay in plan-id order in both directions (MOOP $9,200 is shared by four plans)', () => {
    const tied = ['11111TX0010001', '11111TX0010003', '22222TX0020001', '22222TX0020002'];
    assert.deepEqual(ids(search({ sortBy: 'max_oop' })), ['11111TX0010004', '11111TX0010002', '33333TX0030001', ...tied]);
    assert.deepEqual(ids(search({ sortBy: 'max_oop', descending: true })), [...tied, '33333TX0030001', '11111TX0010002', '11111TX0010004']);
  });
});

describe('pages', () => {
  test('offset pages of every size partition the result, with total and hasMore', () => {
    for (let size = 1; size <= 8; size++) {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const p = search({ pageSize: size, page, sortBy: 'max_oop', descending: true });
        assert.equal(p.total, 7);
        seen.push(...ids(p));
        assert.equal(p.hasMore, seen.length < 7, `size ${size} page ${page}`);
        if (!p.hasMore) break;
      }
      assert.deepEqual(seen, ids(search({ sortBy: 'max_oop', descending: true })), `page size ${size}`);
    }
    assert.deepEqual(search({ pageSize: 5, page: 3 }).rows, [], 'past the end: empty, total still given');
  });
  test('keyset continuation walks the same order; an id outside the result is reported', () => {
    const walk = (afterId?: string): string[] => {
      const p = search({ pageSize: 2, afterId, sortBy: 'max_oop', descending: true });
      assert.equal(p.total, null, 'keyset pages carry no total');
      const got = ids(p);
      return p.hasMore ? [...got, ...walk(got.at(-1))] : got;
    };
    assert.deepEqual(
      [
        ids(search({ pageSize: 2, sortBy: 'max_oop', descending: true }))[0],
        ...walk(ids(search({ pageSize: 1, sortBy: 'max_oop', descending: true }))[0]),
      ],
      ids(search({ sortBy: 'max_oop', descending: true })),
    );
    assert.equal(search({ afterId: '44444AK0040001' }).cursorFound, false);
    assert.equal(search({ afterId: '11111TX0010005' }).cursorFound, true, 'a filtered-out plan is still a position in the order');
  });
});

describe('cost-sharing reductions', () => {
  /** The 94 % variant: every silver deductible $500, except one plan's, not applicable. */
  const csr = (nullFor?: string): CsrOverride => ({
    suffix: '06',
    deductible: (i) => (ds.plan(i).standardComponentId === nullFor ? null : 500),
    maxOutOfPocket: () => 3000,
  });
  test('silver rows show the variant; other metals stay -01', () => {
    const rows = search({ csr: csr() }).rows;
    for (const r of rows) assert.equal(r.variant, ds.plan(r.planIndex).metal === 'silver' ? '06' : '01');
  });
  test('sorting by deductible uses the variant values, nulls last in both directions', () => {
    // All three at $500: plan-id order, in both directions.
    const silverFirst = ['11111TX0010001', '11111TX0010002', '33333TX0030001'];
    assert.deepEqual(ids(search({ csr: csr('22222TX0020001'), sortBy: 'deductible' })), [
      ...silverFirst,
      '11111TX0010004',
      '22222TX0020002',
      '11111TX0010003',
      '22222TX0020001',
    ]);
    assert.deepEqual(ids(search({ csr: csr('22222TX0020001'), sortBy: 'deductible', descending: true })), [
      '11111TX0010003',
      '22222TX0020002',
      '11111TX0010004',
      ...silverFirst,
      '22222TX0020001',
    ]);
  });
  test('maximum deductible compares the variant deductible of silver plans', () => {
    assert.deepEqual(ids(search({ csr: csr(), filters: { ...ADULT, maxDeductible: 600 } })), [
      '33333TX0030001',
      '22222TX0020001',
      '11111TX0010001',
      '11111TX0010002',
    ]);
  });
});
