/**
 * States without plan data where the build has no published benchmark either (README, "States without
 * plan data"), through both fronts: the ZIP lookup's note, the APTC estimate and the tool summaries must
 * say the same thing. The fixture build here lacks HI's benchmark (HI has no plans) and every silver plan
 * of Montgomery County TX (plans, but no benchmark plan and, its state having plans, no table value).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FIXTURE_BENCHMARKS_2025, FIXTURE_PLANS, FIXTURE_ZIPS, planAttributesCsv } from '../helpers/fixture-inputs.ts';
import { buildFixtureWith } from '../helpers/fixture-variant.ts';
import { type McpFixture, startMcpFixture } from '../helpers/mcp-server.ts';

type Body = Record<string, unknown>;

let dir: string;
let fx: McpFixture;
let client: Client;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-no-benchmark-'));
  const { 'HI:1': _hi, ...benchmarks } = FIXTURE_BENCHMARKS_2025;
  const plans = FIXTURE_PLANS.filter((p) => !(p.issuerId === '22222' && p.metal === 'Silver'));
  await buildFixtureWith(dir, join(dir, 'builds'), 'in', { benchmarks, planAttributes: planAttributesCsv(2025, plans) });
  fx = await startMcpFixture({ buildsRoot: join(dir, 'builds') });
  client = (await fx.connect(fx.rest.keys.pro)).client;
});
after(async () => {
  await client?.close();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rest(path: string): Promise<{ status: number; doc: Body }> {
  const r = await fx.rest.get(path, { tier: 'pro' });
  return { status: r.status, doc: (await r.json()) as Body };
}

async function tool(name: string, args: Body): Promise<{ isError: boolean; summary: string; doc: Body }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: Array<{ text?: string }>;
    structuredContent?: Body;
  };
  const isError = r.isError === true;
  return {
    isError,
    summary: isError ? '' : (r.content[0]?.text ?? ''),
    doc: isError ? (JSON.parse(r.content[0]?.text ?? '{}') as Body) : (r.structuredContent ?? {}),
  };
}

const household = { household_income: 40000, household_size: 1, ages: [40] };
const aptcQuery = (zip: string): string => `/v1/health/plans/aptc-estimate?zip=${zip}&household_income=40000&household_size=1&ages=40`;

describe('a state without plan data and without a published benchmark', () => {
  const zip = FIXTURE_ZIPS.honolulu;

  test('the ZIP lookup says the APTC estimate answers 404 too, on both fronts', async () => {
    const r = await rest(`/v1/health/zips/${zip}`);
    assert.equal(r.status, 200);
    assert.equal(r.doc.plans_available, false);
    assert.equal(
      r.doc.note,
      'No plan data for HI in 2025: search, plan detail, compare and out-of-pocket answer 404 for this ZIP and so does the APTC estimate (no published benchmark premium for its rating area either). The crosswalk has no HI plans. Its location and rating area are shown.',
    );
    const t = await tool('lookup_zip', { zip });
    assert.deepEqual(t.doc, r.doc);
    assert.ok(t.summary.endsWith(` ${String(r.doc.note)}`), t.summary);
  });

  test('the APTC estimate is the state’s 404, saying why, not a credit of $0 from no benchmark', async () => {
    const detail = 'No plan data for HI in 2025, and no published benchmark premium for Rating Area 1.';
    const r = await rest(aptcQuery(zip));
    assert.equal(r.status, 404, JSON.stringify(r.doc));
    assert.equal(r.doc.detail, detail);
    const t = await tool('estimate_aptc', { zip, ...household });
    assert.equal(t.isError, true);
    assert.equal(t.doc.status, 404);
    assert.equal(t.doc.detail, detail);
  });
});

describe('a location with plans but no benchmark', () => {
  test('the estimate says there is no benchmark instead of describing one, and so does the summary', async () => {
    const zip = FIXTURE_ZIPS.montgomery;
    const r = await rest(aptcQuery(zip));
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    assert.equal(r.doc.benchmark_source, null);
    assert.equal(r.doc.benchmark_premium, 0);
    assert.equal(
      r.doc.benchmark_plan_description,
      'No benchmark premium for this household in Montgomery County, TX (Rating Area 27): no silver plan is sold here and no published benchmark covers it, so the credit is not estimated',
    );
    const t = await tool('estimate_aptc', { zip, ...household });
    assert.deepEqual(t.doc, r.doc);
    assert.ok(t.summary.startsWith(`${String(r.doc.benchmark_plan_description)} (265 % FPL).`), t.summary);
    assert.doesNotMatch(t.summary, /Estimated credit/);
  });
});
