/**
 * @module What a model reads of the MCP tools: every input property described, the
 * crosswalk's `year` schema agreeing with its description, money written as money, and results shaped
 * as the README says (a one-line summary, then the REST body as JSON text, and `structuredContent`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TOOL_BY_NAME, TOOLS } from '../../src/mcp/tools.ts';
import type { JsonSchema } from '../../src/operations/query.ts';
import { startMcpFixture, type McpFixture } from '../helpers/mcp-server.ts';
import { buildFixture } from '../helpers/rest-server.ts';

type Props = Record<string, JsonSchema & { description?: string; default?: unknown }>;
const propsOf = (schema: JsonSchema): Props => (schema.properties ?? {}) as Props;
/** Dollars as the summaries must write them: grouped, two decimals. */
const MONEY = /\$\d{1,3}(,\d{3})*\.\d{2}(?!\d)/g;

describe('tool input schemas', () => {
  test('every input property of every tool has a description', () => {
    let count = 0;
    for (const tool of TOOLS) {
      for (const [name, prop] of Object.entries(propsOf(tool.inputSchema))) {
        count++;
        assert.equal(typeof prop.description, 'string', `${tool.name}.${name} has a description`);
        assert.ok(prop.description!.trim().length >= 8, `${tool.name}.${name}: description "${prop.description}" says something`);
      }
    }
    assert.ok(count > 30, `checked ${count} properties`);
  });

  test('every output property of every tool has a description a model can read, and no type is an array', () => {
    // Output properties without a description, and `type: [T, "null"]` unions made the MCP
    // Inspector's --strict warn (single-type dialects reject them). The rule, over every tool's
    // outputSchema at every depth (properties, array items, anyOf/oneOf branches):
    // - every property has a description of at least 8 characters;
    // - no `type` is an array: a nullable value is anyOf [{type: T, …}, {type: 'null'}];
    // - an `enum` under a single `type` lists only values of that type (null belongs to the null branch);
    // - nothing the walk cannot see into ($ref, allOf, patternProperties, a schema as additionalProperties),
    //   so no property escapes the first two rules.
    const missing: string[] = [];
    const typeArrays: string[] = [];
    const mixedEnums: string[] = [];
    const unwalked: string[] = [];
    let count = 0;
    const ofType = (type: string, v: unknown): boolean =>
      type === 'integer' ? Number.isInteger(v) : type === 'null' ? v === null : v !== null && typeof v === type;
    const walk = (schema: unknown, path: string): void => {
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Record<string, unknown>;
      if (Array.isArray(node.type)) typeArrays.push(path);
      if (typeof node.type === 'string' && Array.isArray(node.enum) && !node.enum.every((v) => ofType(node.type as string, v)))
        mixedEnums.push(path);
      for (const k of ['$ref', 'allOf', 'patternProperties']) if (node[k] !== undefined) unwalked.push(`${path} ${k}`);
      if (typeof node.additionalProperties === 'object') unwalked.push(`${path} additionalProperties`);
      for (const branch of [...((node.anyOf as unknown[]) ?? []), ...((node.oneOf as unknown[]) ?? [])]) walk(branch, path);
      if (node.items !== undefined) walk(node.items, `${path}[]`);
      for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, { description?: unknown }>)) {
        count++;
        if (typeof prop.description !== 'string' || prop.description.trim().length < 8) missing.push(`${path}.${name}`);
        walk(prop, `${path}.${name}`);
      }
    };
    for (const tool of TOOLS) walk(tool.outputSchema, tool.name);
    assert.deepEqual(missing, [], 'output properties without a description');
    assert.deepEqual(typeArrays, [], 'type arrays in output schemas');
    assert.deepEqual(mixedEnums, [], 'enums holding values of another type than their branch');
    assert.deepEqual(unwalked, [], 'schema parts the rule cannot check');
    assert.ok(count > 300, `checked ${count} properties`);
  });

  test('an output value is nullable only where the server sends null', () => {
    // The crosswalk's issuer IDs fall back to the plan ID's first five digits: always a string.
    const cw = TOOL_BY_NAME.get('get_plan_crosswalk')!.outputSchema;
    const source = propsOf(propsOf(cw).source_plan!);
    assert.deepEqual({ ...source.issuer_id, description: undefined }, { type: 'string', description: undefined });
    const target = (propsOf(cw).target_plan!.anyOf as JsonSchema[]).find((b) => b.type === 'object')!;
    assert.equal(propsOf(target).issuer_id!.type, 'string');
  });

  test("the crosswalk's year is required and described as the source year, with no default claimed", () => {
    const tool = TOOL_BY_NAME.get('get_plan_crosswalk')!;
    const year = propsOf(tool.inputSchema).year!;
    assert.ok((tool.inputSchema.required as string[]).includes('year'));
    assert.equal(year.type, 'integer');
    assert.match(year.description!, /source plan year/i);
    assert.match(year.description!, /year \+ 1/);
    assert.doesNotMatch(year.description!, /default/i, 'a required parameter has no default');
    assert.equal(year.default, undefined);
    // The range the description states is the schema's range.
    const [min, max] = (/(\d{4})[–-](\d{4})/.exec(year.description!) ?? []).slice(1).map(Number);
    assert.deepEqual([min, max], [year.minimum, year.maximum]);
  });
});

describe('text summaries write money as money', () => {
  test('cents are always two digits, thousands grouped', () => {
    const search = TOOL_BY_NAME.get('search_plans')!.summarize({
      total: 1,
      zip: '77002',
      county: 'Harris County',
      state: 'TX',
      rating_area: 'Rating Area 10',
      plan_year: 2025,
      _embedded: { plans: [{ name: 'P', metal_level: 'silver', premium: 512.3 }] },
    });
    assert.match(search, /\$512\.30\/month/);
    const oop = TOOL_BY_NAME.get('estimate_out_of_pocket')!.summarize({
      plan_name: 'P',
      scenario: 'low',
      estimated_annual_cost: 7147.6,
      breakdown: { annual_premium: 6147.6, estimated_out_of_pocket: 1000 },
      sbc_data_available: false,
    });
    assert.match(oop, /\$7,147\.60 a year \(\$6,147\.60 premiums \+ \$1,000\.00 out of pocket\)/);
    const aptc = TOOL_BY_NAME.get('estimate_aptc')!.summarize({
      eligible: true,
      aptc_amount: 250.5,
      benchmark_premium: 600,
      household: { expected_monthly_contribution: 349.5, fpl_percentage: 250, applicable_percentage: 4 },
    });
    assert.match(aptc, /\$250\.50\/month: benchmark \$600\.00\/month minus the expected contribution \$349\.50\/month/);
    // An estimate from benchmark data alone (no plan data in the build) says it is an approximation.
    const approx = TOOL_BY_NAME.get('estimate_aptc')!.summarize({
      eligible: true,
      aptc_amount: 250.5,
      benchmark_premium: 600,
      benchmark_source: 'benchmark_only',
      benchmark_plan_description: 'Approximate second-lowest-cost silver premium …: no plan data is loaded for NY',
      household: { expected_monthly_contribution: 349.5, fpl_percentage: 250, applicable_percentage: 4 },
      plan_data_years: [2024],
      data_freshness: 'PY2025 benchmark only, no plan data for NY: SLCSP benchmarks …, values in force 2025-01-01',
    });
    // It cites the benchmark table's vintage and names the years that have the state's plans.
    assert.match(
      approx,
      /no plan data is loaded for NY; the credit is an approximation \(PY2025 benchmark only, .*values in force 2025-01-01\)\. Plan data for this state is loaded for 2024\.$/,
    );
    const modeled = TOOL_BY_NAME.get('estimate_aptc')!.summarize({
      eligible: false,
      benchmark_source: 'modeled',
      data_source: 'puf_data+modeled_premiums',
      household: { fpl_percentage: 450 },
    });
    assert.match(modeled, /Premiums are modeled from SLCSP benchmarks, not issuer rates\.$/);
  });
});

describe('tool results through a real MCP server', () => {
  let dir: string;
  let fx: McpFixture;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-mcp-texts-'));
    fx = await startMcpFixture({ buildsRoot: await buildFixture(dir) });
  });
  after(async () => {
    await fx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('tools/list publishes the described schemas', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const { tools } = await client.listTools();
    for (const tool of tools) {
      for (const [name, prop] of Object.entries(propsOf(tool.inputSchema as JsonSchema)))
        assert.equal(typeof prop.description, 'string', `${tool.name}.${name}`);
    }
  });

  test('content is the one-line summary, then the REST body as JSON text; money has cents', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const calls: Array<[string, Record<string, unknown>, boolean]> = [
      ['search_plans', { zip: '77002', age: 40 }, true],
      ['compare_plans', { plan_ids: ['11111TX0010001-01', '22222TX0020001-01'], zip: '77002', age: 40 }, false],
      ['estimate_out_of_pocket', { plan_id: '11111TX0010001-01', zip: '77002', age: 40, scenario: 'medium' }, true],
      ['estimate_aptc', { zip: '77002', household_income: 30000, household_size: 1, ages: [40] }, true],
      ['check_ichra_affordability', { zip: '77002', age: 40, household_income: 52000, hra_monthly: 300 }, true],
      ['get_plan_stats', { zip: '77002', age: 40 }, true],
      ['search_dental_plans', { zip: '77002', age: 40 }, false],
      ['get_dental_plan_details', { plan_id: '55555TX0050001-01' }, false],
      ['lookup_zip', { zip: '96813' }, false],
      ['list_plan_years', {}, false],
    ];
    for (const [name, args, hasMoney] of calls) {
      const r = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: Array<{ type: string; text: string }>;
        structuredContent: unknown;
      };
      assert.notEqual(r.isError, true, `${name}: ${r.content[0]?.text}`);
      assert.equal(r.content.length, 2, name);
      const [summary, json] = r.content;
      assert.equal(summary!.type, 'text');
      assert.ok(!summary!.text.includes('\n') && !summary!.text.startsWith('{'), `${name}: one line of prose`);
      assert.deepEqual(JSON.parse(json!.text), r.structuredContent, `${name}: JSON text = structuredContent`);
      const dollars = summary!.text.match(/\$[\d,.]+/g) ?? [];
      if (hasMoney) assert.ok(dollars.length > 0, `${name}: names an amount`);
      for (const d of dollars) assert.match(d.replace(/[.,]$/, ''), new RegExp(`^${MONEY.source}$`), `${name}: ${d} in "${summary!.text}"`);
      if (name === 'lookup_zip') assert.match(summary!.text, /No plan data for HI in 2025/);
    }
  });

  test('docs/mcp.md describes the result content as it is', () => {
    const page = readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    const mcp = page.slice(0, page.indexOf('Credentials:'));
    assert.match(mcp.replace(/\s+/g, ' '), /one-line text summary followed by the same JSON as text/);
  });
});
