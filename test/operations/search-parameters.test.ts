/**
 * @module The search parameters' table (src/operations/search-parameters.ts) against what the service
 * does with each: every parameter declared to bind cursors does (a cursor replayed with another value
 * is refused), every one declared not to does not, and every Pro one is refused to a Free caller on
 * REST and on MCP, for search and for stats. The changes below are typed by the table's names: a
 * parameter added without its case here is a type error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TOOL_BY_NAME, toolArgsToRequest, type ToolDefinition } from '../../src/mcp/tools.ts';
import { createLiveRegistry, type LiveRegistry } from '../../src/operations/live-registry.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { executeToBody, type BodyResult, type Operation } from '../../src/operations/operation.ts';
import { threadScratch } from '../../src/operations/request-scratch.ts';
import type { JsonSchema } from '../../src/operations/query.ts';
import { PAGING_AND_ORDER, SEARCH_PARAMETER_ENTRIES, type SearchParameterName } from '../../src/operations/search-parameters.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

const SEARCH: Operation<never> = OPERATIONS.find((o) => o.path === '/v1/health/plans')!;
const STATS: Operation<never> = OPERATIONS.find((o) => o.path === '/v1/health/plans/stats')!;

let dir: string;
let live: LiveRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-search-params-'));
  const root = await buildFixture(dir, [2026]);
  live = createLiveRegistry(root, 'http://api.test', () => {});
});
after(() => {
  live?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Parameters over {@link BASE}; undefined leaves the base's out. */
type Over = Readonly<Record<string, string | undefined>>;

const BASE: Over = { zip: FIXTURE_ZIPS.harris, age: '40', year: '2025', per_page: '2' };
const CREDIT: Over = { income: '50000', household_size: '2' };

/**
 * For each parameter, two requests differing in it alone (the first with more than one page), or null
 * for one that a cursor request cannot vary.
 */
const CHANGES: { readonly [K in SearchParameterName]: readonly [Over, Over] | null } = {
  zip: [{}, { zip: FIXTURE_ZIPS.harris2 }],
  age: [{}, { age: '41' }],
  ages: [
    { age: undefined, ages: '40,38' },
    { age: undefined, ages: '40,39' },
  ],
  year: [{}, { year: '2026' }],
  county_fips: [
    { zip: FIXTURE_ZIPS.split, county_fips: '48157' },
    { zip: FIXTURE_ZIPS.split, county_fips: '48201' },
  ],
  metal_level: [{}, { metal_level: 'silver' }],
  plan_type: [{}, { plan_type: 'hmo' }],
  issuer: [{}, { issuer: 'zz' }],
  hsa_eligible: [{}, { hsa_eligible: 'false' }],
  max_premium: [{}, { max_premium: '5000' }],
  max_deductible: [{}, { max_deductible: '50000' }],
  sort_by: [{}, { sort_by: 'name' }],
  sort_order: [{}, { sort_order: 'desc' }],
  // The cursor is what is replayed; a page number with it is refused on its own rule.
  cursor: null,
  page: null,
  per_page: [{}, { per_page: '3' }],
  income: [CREDIT, { ...CREDIT, income: '60000' }],
  household_size: [CREDIT, { ...CREDIT, household_size: '3' }],
};

function queryOf(...overs: Over[]): string {
  const merged: Record<string, string | undefined> = {};
  for (const o of [BASE, ...overs]) Object.assign(merged, o);
  return Object.entries(merged)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
}

/** A REST request as the REST front runs it: the query string as sent. */
function rest(op: Operation<never>, tier: Tier, query: string): BodyResult {
  return executeToBody(op, { registry: live.current(), baseUrl: 'http://api.test' }, tier, query, {}, threadScratch());
}

/** A tool call as the MCP front runs it: native JSON arguments, typed by the tool's input schema. */
function tool(t: ToolDefinition, tier: Tier, query: string): BodyResult {
  const props = (t.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  const args: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(query)) {
    const type = props[k]?.type;
    args[k] =
      type === 'integer' || type === 'number'
        ? Number(v)
        : type === 'boolean'
          ? v === 'true'
          : type === 'array'
            ? v.split(',').map(Number)
            : v;
  }
  const req = toolArgsToRequest(t, args);
  assert.ok(req.ok, JSON.stringify(!req.ok && req.errors));
  return executeToBody(
    t.operation,
    { registry: live.current(), baseUrl: 'http://api.test' },
    tier,
    req.query,
    req.pathParams,
    threadScratch(),
  );
}

function body(r: BodyResult): Record<string, unknown> {
  assert.ok(r.ok, JSON.stringify(!r.ok && r.problem));
  return r.body;
}

describe('cursors are bound to every parameter declared to bind them, and to no other', () => {
  for (const [name, p] of SEARCH_PARAMETER_ENTRIES) {
    const change = CHANGES[name];
    if (change === null) {
      test(`${name}: not varied with a cursor (declared not to bind: ${p.cursor.fed === 'never' ? p.cursor.why : 'NOT DECLARED'})`, () => {
        assert.equal(p.cursor.fed, 'never', `${name} binds cursors, so it needs a change to test`);
      });
      continue;
    }
    const [a, b] = change;
    const binds = p.cursor.fed !== 'never';
    test(`${name}: a cursor replayed with another ${name} is ${binds ? 'refused' : 'accepted'}`, () => {
      const cursor = body(rest(SEARCH, 'pro', queryOf(a))).next_cursor;
      assert.equal(typeof cursor, 'string', 'the first request has a next page');
      const withCursor = { cursor: cursor as string };
      body(rest(SEARCH, 'pro', queryOf(a, withCursor)));
      const replay = rest(SEARCH, 'pro', queryOf(b, withCursor));
      if (!binds) {
        body(replay);
        return;
      }
      assert.ok(!replay.ok, 'refused');
      assert.deepEqual(
        replay.problem.errors?.map((e) => e.field),
        ['cursor'],
      );
    });
  }
});

describe('every Pro parameter is refused to a Free caller on REST and on MCP, and served to Pro', () => {
  const pro = SEARCH_PARAMETER_ENTRIES.filter(([, p]) => p.tier !== 'free');
  test('the table has Pro parameters', () => assert.ok(pro.length >= 8, `${pro.length} Pro parameters`));
  for (const [name, p] of pro) {
    const change = CHANGES[name];
    assert.ok(change !== null, `${name} has a Pro value to send`);
    const query = queryOf(change[1]);
    const fronts: Array<[string, Operation<never>, (tier: Tier, q: string) => BodyResult]> = [
      ['REST search', SEARCH, (tier, q) => rest(SEARCH, tier, q)],
      ['MCP search_plans', SEARCH, (tier, q) => tool(TOOL_BY_NAME.get('search_plans')!, tier, q)],
    ];
    if (!PAGING_AND_ORDER.has(name)) {
      fronts.push(
        ['REST stats', STATS, (tier, q) => rest(STATS, tier, q)],
        ['MCP get_plan_stats', STATS, (tier, q) => tool(TOOL_BY_NAME.get('get_plan_stats')!, tier, q)],
      );
    }
    for (const [front, op, run] of fronts) {
      test(`${front}: ${name}${p.tier === 'pro-unless-default' ? ' (other than its default)' : ''}`, () => {
        const q = op === STATS ? query.replace(/&per_page=\d+/, '') : query;
        const r = run('free', q);
        assert.ok(!r.ok, 'refused to Free');
        assert.equal(r.problem.kind, 'paymentRequired');
        assert.match(r.problem.detail, new RegExp(`\\b${name}\\b`));
        body(run('pro', q));
        if (p.tier === 'pro-unless-default') body(run('free', queryOf(change[0])));
      });
    }
  }
});

describe('the tools say which parameters are Pro', () => {
  for (const toolName of ['search_plans', 'get_plan_stats']) {
    test(`${toolName}: every Pro filter is named in the description and its argument says Pro`, () => {
      const t = TOOL_BY_NAME.get(toolName)!;
      const props = (t.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      for (const [name, p] of SEARCH_PARAMETER_ENTRIES) {
        if (props[name] === undefined || p.tier === 'free') continue;
        assert.match(t.description, new RegExp(`\\b${name}\\b`), `${name} named`);
        if (p.mcp !== undefined) assert.match(props[name].description ?? '', /\bPro\b/, `${name} says Pro`);
      }
    });
  }
});
