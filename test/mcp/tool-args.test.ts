/**
 * @module Tool arguments → operation parameters (src/mcp/tools.ts): JSON numbers that are not plain
 * decimal text. `1e400` parses to Infinity and `1e21` stringifies in exponent form; both must reach the
 * caller as a 400 on the argument with a number message, not as "received string" or a 500.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOOL_BY_NAME, toolArgsToRequest } from '../../src/mcp/tools.ts';
import { parseQuery } from '../../src/operations/query.ts';

const tool = (name: string) => {
  const t = TOOL_BY_NAME.get(name);
  assert.ok(t !== undefined, name);
  return t;
};

test('non-finite numbers (1e400 in the JSON) are refused on their argument, list items at their index', () => {
  const huge = JSON.parse('{"zip":"77002","age":1e400,"income":-1e400,"household_size":1}') as Record<string, unknown>;
  assert.equal(huge.age, Infinity);
  const r = toolArgsToRequest(tool('search_plans'), huge);
  assert.deepEqual(r, {
    ok: false,
    errors: [
      { field: 'age', message: 'Number must be finite' },
      { field: 'income', message: 'Number must be finite' },
    ],
  });
  const ages = toolArgsToRequest(
    tool('estimate_aptc'),
    JSON.parse('{"zip":"77002","household_income":1,"household_size":2,"ages":[30,1e400]}') as Record<string, unknown>,
  );
  assert.deepEqual(ages, { ok: false, errors: [{ field: 'ages.1', message: 'Number must be finite' }] });
});

test('numbers JavaScript writes in exponent form get the range message, not a type error', () => {
  const t = tool('estimate_aptc');
  const r = toolArgsToRequest(t, { zip: '77002', household_income: 1e21, household_size: 1, ages: [1e-7] });
  assert.ok(r.ok);
  assert.deepEqual(r.query.slice(1, 2), [['household_income', '1000000000000000000000']]);
  const parsed = parseQuery(t.operation.query, r.query);
  assert.ok(!parsed.ok);
  assert.deepEqual(parsed.errors, [
    { field: 'ages.0', message: 'Expected integer, received float' },
    { field: 'household_income', message: 'Number must be less than or equal to 10000000' },
  ]);
});
