/**
 * @module One capability, one name. The operationId and the MCP tool name are public
 * (docs/compatibility.md#mcp-tools) and pinned here; the file and the export follow the tool name:
 * `search_plans` lives in `src/operations/search-plans.ts` as `searchPlansOperation`.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { TOOL_BY_NAME, TOOLS } from '../../src/mcp/tools.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import type { Operation } from '../../src/operations/operation.ts';

const DIR = new URL('../../src/operations/', import.meta.url);

/** operationId → tool name, as docs/compatibility.md#mcp-tools maps the tools to the REST endpoints. */
const PUBLIC_NAMES: Readonly<Record<string, string>> = {
  searchPlans: 'search_plans',
  getPlanById: 'get_plan_details',
  comparePlans: 'compare_plans',
  estimateOop: 'estimate_out_of_pocket',
  calculateAptc: 'estimate_aptc',
  getPlanStats: 'get_plan_stats',
  checkIchraAffordability: 'check_ichra_affordability',
  getCrosswalk: 'get_plan_crosswalk',
  lookupZip: 'lookup_zip',
  listIssuers: 'list_issuers',
  getAvailableYears: 'list_plan_years',
  searchDentalPlans: 'search_dental_plans',
  getDentalPlanById: 'get_dental_plan_details',
};

const kebab = (tool: string): string => tool.replaceAll('_', '-');
const exportName = (tool: string): string => `${tool.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Operation`;

test('operationIds and tool names are the public ones', () => {
  assert.deepEqual(Object.fromEntries(OPERATIONS.map((op) => [op.id, op.toolName])), PUBLIC_NAMES);
});

test('each operation lives in the file named after its tool, exported under the name derived from it', async () => {
  for (const op of OPERATIONS) {
    assert.match(op.toolName, /^[a-z]+(_[a-z]+)*$/, `${op.id}: tool name in snake case`);
    const mod = (await import(new URL(`${kebab(op.toolName)}.ts`, DIR).href)) as Record<string, unknown>;
    assert.equal(mod[exportName(op.toolName)], op, `${kebab(op.toolName)}.ts exports ${exportName(op.toolName)}`);
  }
});

test('every operation a module of src/operations exports is listed and named by the rule', async () => {
  const isOperation = (v: unknown): v is Operation<never> =>
    typeof v === 'object' && v !== null && 'toolName' in v && 'handle' in v && 'query' in v;
  let found = 0;
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts'))) {
    const mod = (await import(new URL(file, DIR).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (!isOperation(value)) continue;
      found++;
      assert.ok((OPERATIONS as readonly Operation<never>[]).includes(value), `${file}: ${name} is in OPERATIONS`);
      assert.equal(`${file} ${name}`, `${kebab(value.toolName)}.ts ${exportName(value.toolName)}`, `${value.id}: file and export`);
    }
  }
  assert.equal(found, OPERATIONS.length);
});

test('each tool is the one its operation names', () => {
  assert.deepEqual(TOOLS.map((t) => t.name).sort(), OPERATIONS.map((op) => op.toolName).sort());
  for (const op of OPERATIONS) assert.equal(TOOL_BY_NAME.get(op.toolName)?.operation, op, op.toolName);
});
