/**
 * @module The generated tool input schemas against the ones first published for the public tools
 * (test/fixtures/published-tool-input-schemas.json, docs/compatibility.md#mcp-tools): the same
 * arguments, the same required ones and the same keywords, apart from the descriptions (ours) and the
 * departures listed here with their reason (arguments added since, and required ones that became one of
 * a pair).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { TOOLS } from '../../src/mcp/tools.ts';

const PUBLISHED = new URL('../fixtures/published-tool-input-schemas.json', import.meta.url);

type Schema = { required?: string[]; properties: Record<string, Record<string, unknown>> };

/** `tool.argument.keyword` → why ours differs from the published schema. */
const DEPARTURES: Readonly<Record<string, string>> = {
  'search_plans.metal_level.enum': 'REST accepts the CMS spelling `expanded bronze` too; the tool takes what REST takes',
  'search_plans.metal_level.type': 'enumerations of strings say so (valid in both schema dialects)',
  'search_plans.plan_type.type': 'enumerations of strings say so',
  'search_plans.sort_by.type': 'enumerations of strings say so',
  'search_plans.sort_order.type': 'enumerations of strings say so',
  'estimate_out_of_pocket.scenario.type': 'enumerations of strings say so',
  'get_plan_crosswalk.year.const': 'source years follow the loaded crosswalk data (docs/compatibility.md#plan-crosswalk), not a fixed 2025',
  'get_plan_crosswalk.year.type': 'the REST range instead of const 2025 (see const)',
  'get_plan_crosswalk.year.minimum': 'the REST range instead of const 2025 (see const)',
  'get_plan_crosswalk.year.maximum': 'the REST range instead of const 2025 (see const)',
};

const HOUSEHOLD = 'household pricing; pinned by test/fixtures/mcp-tool-input-schemas.json';
/** Arguments the published schemas do not have, added since: `tool.argument` → where it comes from. */
const ADDED_ARGUMENTS: Readonly<Record<string, string>> = {
  'search_plans.ages': HOUSEHOLD,
  'get_plan_details.zip': HOUSEHOLD,
  'get_plan_details.county_fips': HOUSEHOLD,
  'get_plan_details.age': HOUSEHOLD,
  'get_plan_details.ages': HOUSEHOLD,
  'get_plan_details.income': HOUSEHOLD,
  'get_plan_details.household_size': HOUSEHOLD,
  'compare_plans.ages': HOUSEHOLD,
  'compare_plans.income': HOUSEHOLD,
  'compare_plans.household_size': HOUSEHOLD,
  'estimate_out_of_pocket.ages': HOUSEHOLD,
};

/** Arguments the published schemas require that ours do not, and why. */
const NO_LONGER_REQUIRED: Readonly<Record<string, string>> = {
  'search_plans.age':
    'age or ages: exactly one is required, checked with the other arguments (a top-level oneOf is refused by several MCP clients)',
  'compare_plans.age': 'age or ages, as on search_plans',
  'estimate_out_of_pocket.age': 'age or ages, as on search_plans',
};

/** Tools not among the published ones, added since: tool name → where it comes from. */
const BEYOND_CONTRACT: Readonly<Record<string, string>> = {
  get_plan_stats: 'facets and ranges of a search; its schema is pinned by test/fixtures/mcp-tool-input-schemas.json',
  check_ichra_affordability: 'ICHRA affordability; its schema is pinned by test/fixtures/mcp-tool-input-schemas.json',
  search_dental_plans: 'dental plans by ZIP; its schema is pinned by test/fixtures/mcp-tool-input-schemas.json',
  get_dental_plan_details: 'a dental plan’s record; its schema is pinned by test/fixtures/mcp-tool-input-schemas.json',
};

const withoutDescriptions = (v: unknown): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => k !== 'description')
          .map(([k, x]) => [k, withoutDescriptions(x)]),
      )
    : v;

test('tool input schemas follow the published ones but for the listed departures', () => {
  const contract = JSON.parse(readFileSync(PUBLISHED, 'utf8')) as Record<string, Schema>;
  const contractTools = TOOLS.filter((t) => BEYOND_CONTRACT[t.name] === undefined);
  assert.deepEqual(contractTools.map((t) => t.name).sort(), Object.keys(contract).sort());
  const found: string[] = [];
  const added: string[] = [];
  const unrequired: string[] = [];
  for (const tool of contractTools) {
    const theirs = contract[tool.name]!;
    const ours = tool.inputSchema as Schema;
    const required = (theirs.required ?? []).filter((a) => {
      const kept = NO_LONGER_REQUIRED[`${tool.name}.${a}`] === undefined;
      if (!kept) unrequired.push(`${tool.name}.${a}`);
      return kept;
    });
    assert.deepEqual(ours.required, required, `${tool.name} required`);
    const mine = Object.keys(ours.properties).filter((a) => {
      const contractual = ADDED_ARGUMENTS[`${tool.name}.${a}`] === undefined;
      if (!contractual) added.push(`${tool.name}.${a}`);
      return contractual;
    });
    assert.deepEqual(mine, Object.keys(theirs.properties), `${tool.name} arguments`);
    for (const [arg, schema] of Object.entries(theirs.properties)) {
      const mine = ours.properties[arg]!;
      for (const k of new Set([...Object.keys(schema), ...Object.keys(mine)].filter((x) => x !== 'description'))) {
        if (JSON.stringify(withoutDescriptions(mine[k])) !== JSON.stringify(schema[k])) found.push(`${tool.name}.${arg}.${k}`);
      }
    }
  }
  assert.deepEqual(found.sort(), Object.keys(DEPARTURES).sort());
  assert.deepEqual(added.sort(), Object.keys(ADDED_ARGUMENTS).sort(), 'every added argument is there');
  assert.deepEqual(unrequired.sort(), Object.keys(NO_LONGER_REQUIRED).sort(), 'every unrequired argument was required');
});
