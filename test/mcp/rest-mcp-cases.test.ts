/**
 * One table of cases run through both fronts (the hono pattern: a shared case table run against every
 * implementation). Each case names an operation by its REST path, gives its input twice (the REST query
 * string and the MCP tool arguments, native types and arrays) and the outcome expected: a status with
 * the problem's error fields, or a few facts of the body. Every case runs against a real REST server
 * (port 0, fetch) and the real MCP endpoint (SDK client), and the two answers must be the same document:
 * equal bodies on success, equal problems (type, status, detail, messages, instance) on failure, the
 * fields named by each front's own parameter names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOLS } from '../../src/mcp/tools.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { buildCrosswalkFixture } from '../helpers/crosswalk-fixture.ts';
import { type McpFixture, startMcpFixture } from '../helpers/mcp-server.ts';
import { CASES, type Case, YEARS } from '../helpers/rest-mcp-case-table.ts';

type Body = Record<string, unknown>;

let dir: string;
let fx: McpFixture;
const clients = new Map<Tier, Client>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-cases-'));
  fx = await startMcpFixture({ buildsRoot: await buildCrosswalkFixture(dir) });
});
after(async () => {
  for (const c of clients.values()) await c.close();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The outcome of one front: a status and its JSON document (body or problem). */
interface Outcome {
  readonly status: number;
  readonly doc: Body;
}

async function viaRest(c: Case): Promise<Outcome> {
  const res = await fx.rest.get(c.rest, { tier: c.tier ?? 'pro' });
  return { status: res.status, doc: (await res.json()) as Body };
}

async function viaMcp(c: Case): Promise<Outcome> {
  const tier = c.tier ?? 'pro';
  let client = clients.get(tier);
  if (client === undefined) {
    client = (await fx.connect(fx.rest.keys[tier])).client;
    clients.set(tier, client);
  }
  const r = (await client.callTool({ name: toolFor(c.op), arguments: c.args })) as {
    isError?: boolean;
    content: Array<{ text?: string }>;
    structuredContent?: Body;
  };
  if (r.isError !== true) return { status: 200, doc: r.structuredContent ?? {} };
  const problem = JSON.parse(r.content[0]?.text ?? '{}') as Body;
  return { status: Number(problem.status), doc: problem };
}

/** The tool serving an operation (found by path). */
function toolFor(op: string): string {
  const tool = TOOLS.find((t) => t.operation.path === op);
  assert.ok(tool !== undefined, `no tool for ${op}`);
  return tool.name;
}

/** A value at a dotted path; `plans` is short for `_embedded.plans`. */
function at(doc: Body, path: string): unknown {
  const parts = path.split('.');
  if (parts[0] === 'plans') parts.unshift('_embedded');
  return parts.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], doc);
}

const fieldsOf = (doc: Body): string[] => ((doc.errors ?? []) as Array<{ field: string }>).map((e) => e.field);

function expectOutcome(c: Case, o: Outcome, front: 'REST' | 'MCP'): void {
  const label = `${front} ${c.name}`;
  assert.equal(o.status, c.status, `${label}: ${JSON.stringify(o.doc).slice(0, 300)}`);
  if (c.status === 200) {
    for (const [path, value] of Object.entries(c.facts ?? {})) assert.deepEqual(at(o.doc, path), value, `${label}: ${path}`);
    return;
  }
  assert.equal(o.doc.type, `http://api.test/problems/${SLUG[c.status]}`, label);
  const fields = front === 'MCP' ? (c.toolFields ?? c.fields) : c.fields;
  if (fields !== undefined) assert.deepEqual(fieldsOf(o.doc), [...fields], label);
  const detail = front === 'MCP' ? (c.toolDetail ?? c.detail) : c.detail;
  if (detail instanceof RegExp) assert.match(String(o.doc.detail), detail, label);
  else if (detail !== undefined) assert.equal(o.doc.detail, detail, label);
}

const SLUG: Readonly<Record<number, string>> = { 400: 'validation-error', 402: 'payment-required', 404: 'not-found' };

/** The two fronts' documents are one: equal bodies; equal problems once each names fields its own way. */
function expectSame(c: Case, rest: Outcome, mcp: Outcome): void {
  if (c.status === 200) {
    assert.deepEqual(mcp.doc, rest.doc, `${c.name}: the tool's structuredContent is the REST body`);
    return;
  }
  const messages = (d: Body): unknown => ((d.errors ?? []) as Array<{ message: string }>).map((e) => e.message);
  // A detail naming a field is written in each front's names (checked against the case by expectOutcome).
  const { errors: _r, ...restRest } = rest.doc;
  const { errors: _m, ...mcpRest } = mcp.doc;
  if (c.toolDetail !== undefined) mcpRest.detail = restRest.detail;
  assert.deepEqual(mcpRest, restRest, `${c.name}: the same problem`);
  assert.deepEqual(messages(mcp.doc), c.toolMessages ?? messages(rest.doc), `${c.name}: the same messages`);
}

describe('one case table, two fronts', () => {
  test('every tool has at least one success and one failure case', () => {
    for (const t of TOOLS) {
      const mine = CASES.filter((c) => c.op === t.operation.path);
      assert.ok(
        mine.some((c) => c.status === 200) && (t.operation.path === YEARS || mine.some((c) => c.status !== 200)),
        `${t.name} is covered`,
      );
    }
  });
  for (const c of CASES) {
    test(`${c.name}: ${c.status}`, async () => {
      const [rest, mcp] = [await viaRest(c), await viaMcp(c)];
      expectOutcome(c, rest, 'REST');
      expectOutcome(c, mcp, 'MCP');
      expectSame(c, rest, mcp);
    });
  }
});
