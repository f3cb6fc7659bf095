/**
 * A household's `members` has one schema family (src/operations/shared-schemas.ts `householdMembers`):
 * wherever a response lists them (search, compare, detail, out-of-pocket, APTC, and so the MCP tools'
 * output schemas), each member is its age first, then what that response says of it, with no other
 * members, and a field the responses share (the age, whether charged, the premium basis) is described
 * the same everywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATIONS } from '../../src/operations/index.ts';

type Schema = { readonly [k: string]: unknown };

/** Every `members` array schema under `schema`, with the path it was found at. */
function membersSchemas(schema: unknown, path: string, out: Array<[string, Schema]>): Array<[string, Schema]> {
  if (schema === null || typeof schema !== 'object') return out;
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'members' && (v as Schema | undefined)?.type === 'array') out.push([`${path}.members`, v as Schema]);
    else membersSchemas(v, `${path}.${k}`, out);
  }
  return out;
}

const found = OPERATIONS.flatMap((op) => membersSchemas(op.responseSchema, op.id, []));

test('the members of search, compare, detail, out-of-pocket and APTC are all found', () => {
  const ops = new Set(found.map(([path]) => path.split('.')[0]));
  assert.deepEqual([...ops].sort(), ['calculateAptc', 'comparePlans', 'estimateOop', 'getPlanById', 'searchPlans']);
});

test('every member is its age first, then the response’s own fields, all required and nothing else', () => {
  for (const [path, s] of found) {
    const items = s.items as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    const names = Object.keys(items.properties);
    assert.equal(names[0], 'age', path);
    assert.deepEqual(items.required, names, path);
    assert.equal(items.additionalProperties, false, path);
    assert.equal(typeof s.description, 'string', path);
  }
});

test('a field several responses give their members is declared once: the same schema everywhere', () => {
  const byField = new Map<string, Array<[string, unknown]>>();
  for (const [path, s] of found) {
    for (const [name, field] of Object.entries((s.items as { properties: Record<string, unknown> }).properties)) {
      if (!byField.has(name)) byField.set(name, []);
      byField.get(name)!.push([path, field]);
    }
  }
  for (const name of ['age', 'charged']) {
    const all = byField.get(name) ?? [];
    assert.ok(all.length >= 4, `${name} is in several responses (${all.length})`);
    for (const [path, field] of all) assert.deepEqual(field, all[0]![1], `${path}.${name}`);
  }
  // The premium basis names the field it qualifies (premium, or APTC's slcsp_premium), in one sentence.
  const bases = byField.get('premium_basis') ?? [];
  // Plan summaries (search and compare rows), detail, out-of-pocket, APTC.
  assert.equal(bases.length, 5);
  for (const [path, field] of bases) {
    const share = path.startsWith('calculateAptc') ? 'slcsp_premium' : 'premium';
    assert.equal(JSON.stringify(field), JSON.stringify(bases[0]![1]).replaceAll('premium is', `${share} is`), path);
  }
});
