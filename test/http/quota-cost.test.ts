/**
 * What each kind of request costs against the caller's daily quota: the README's "What a request costs"
 * table, measured here on a real REST server and MCP endpoint sharing one counter. Each
 * row sends one request and reads the counter's change from `RateLimit-Remaining` of a `years`
 * request before and after (the `years` request itself costs 1).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type McpFixture, startMcpFixture } from '../helpers/mcp-server.ts';

let fx: McpFixture;
let client: Client;

before(async () => {
  fx = await startMcpFixture();
  client = (await fx.connect(fx.rest.keys.free)).client;
});
after(async () => {
  await client?.close();
  await fx?.close();
});

async function remaining(): Promise<number> {
  const r = await fx.rest.get('/v1/health/years', { tier: 'free' });
  await r.arrayBuffer();
  return Number(r.headers.get('ratelimit-remaining'));
}

/** Units `send` took from the Free user's counter. */
async function cost(send: () => Promise<unknown>): Promise<number> {
  const before = await remaining();
  await send();
  const after = await remaining();
  return before - after - 1;
}

const rest =
  (path: string, init: RequestInit & { tier?: 'free' | null } = {}) =>
  async (): Promise<number> => {
    const r = await fx.rest.get(path, { tier: 'free', ...init });
    await r.arrayBuffer();
    return r.status;
  };

describe('what a request costs against the daily quota (README table)', () => {
  const charged: Array<[string, () => Promise<unknown>]> = [
    ['REST 200', rest('/v1/health/plans?zip=77002&age=40')],
    ['REST HEAD', rest('/v1/health/plans?zip=77002&age=40', { method: 'HEAD' })],
    ['REST 400 (a request error)', rest('/v1/health/plans?zip=7700&age=40')],
    ['REST 402 (a Pro parameter on a Free key)', rest('/v1/health/plans?zip=77002&age=40&max_premium=300')],
    ['REST 404 (an unknown ZIP)', rest('/v1/health/zips/12345')],
    ['MCP tools/call, success', () => client.callTool({ name: 'list_plan_years', arguments: {} })],
    ['MCP tools/call, tool error', () => client.callTool({ name: 'lookup_zip', arguments: { zip: '12345' } })],
  ];
  for (const [what, send] of charged) test(`charged 1: ${what}`, async () => assert.equal(await cost(send), 1));

  test('charged 1: REST 304 (If-None-Match matched)', async () => {
    const first = await fx.rest.get('/v1/health/zips/77002', { tier: 'free' });
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    assert.equal(await cost(rest('/v1/health/zips/77002', { headers: { 'if-none-match': etag } })), 1);
  });

  const free: Array<[string, () => Promise<unknown>]> = [
    ['REST 401 (no key)', rest('/v1/health/plans?zip=77002&age=40', { tier: null })],
    ['REST 404 of an unknown route', rest('/v1/health/nowhere')],
    ['REST 405', rest('/v1/health/years', { method: 'DELETE' })],
    ['the OpenAPI document', rest('/v1/openapi.json')],
    ['/healthz', rest('/healthz')],
    ['MCP tools/list', () => client.listTools()],
    ['MCP ping', () => client.ping()],
  ];
  for (const [what, send] of free) test(`free: ${what}`, async () => assert.equal(await cost(send), 0));
});
