/** The warning `hpd serve` prints when the listeners' connection caps do not fit the open-file limit. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fdBudgetWarning, openFileLimit, RESERVED_DESCRIPTORS } from '../../src/cli/fd-budget.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
`;

test('the open-file limit is read from /proc/self/limits', () => {
  assert.equal(openFileLimit(LIMITS), 20000);
  assert.equal(openFileLimit(LIMITS.replace('20000                20000', 'unlimited            unlimited')), Number.POSITIVE_INFINITY);
  assert.equal(openFileLimit('nothing here'), null);
  const own = openFileLimit();
  assert.ok(own === null || own > 0);
});

test('caps that fit give no warning; caps that do not name each variable and the limit', () => {
  assert.equal(fdBudgetWarning({ REST: 10_000, MCP: 1000, AUTH: 1000 }, 20_000), null);
  assert.equal(fdBudgetWarning({ REST: 10_000 }, null), null);
  const w = fdBudgetWarning({ HPD_REST_MAX_CONNECTIONS: 10_000, HPD_MAX_CONNECTIONS: 1000 }, 1024);
  assert.ok(w !== null);
  assert.match(w, /HPD_REST_MAX_CONNECTIONS=10000, HPD_MAX_CONNECTIONS=1000/);
  assert.match(w, new RegExp(`plus ${RESERVED_DESCRIPTORS} reserved exceed the open-file limit 1024`));
  assert.equal(w.includes('\n'), false, 'one line');
});
