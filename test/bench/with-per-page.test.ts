/**
 * bench/lib/workloads.ts withPerPage: a search of the mix rewritten to ask for the first page of N
 * plans, every other parameter kept as sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withPerPage } from '../../bench/lib/workloads.ts';

test('withPerPage drops the page size, page number and cursor and asks for the first page of N', () => {
  assert.equal(withPerPage('/v1/health/plans?zip=77002&age=40', 5), '/v1/health/plans?zip=77002&age=40&per_page=5');
  assert.equal(
    withPerPage('/v1/health/plans?zip=77002&age=40&per_page=100&sort_by=name&page=3', 10),
    '/v1/health/plans?zip=77002&age=40&sort_by=name&per_page=10',
  );
  assert.equal(
    withPerPage('/v1/health/plans?zip=10001&cursor=AbC-_9&page_size=50&age=21', 25),
    '/v1/health/plans?zip=10001&age=21&per_page=25',
  );
  // Only whole names: a parameter whose name ends like one of them stays.
  assert.equal(withPerPage('/v1/health/plans?zip=10001&age=21&max_page=2', 5), '/v1/health/plans?zip=10001&age=21&max_page=2&per_page=5');
  assert.equal(withPerPage('/v1/health/plans', 50), '/v1/health/plans?per_page=50');
});
