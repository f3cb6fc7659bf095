/**
 * The MCP server end to end with the SDK's own Client over Streamable HTTP: API keys, every tool, the
 * REST policy (tiers, validation, quota) as tool errors, sessions, and access-token verification against
 * a local key set (the embedded authorization server has its own tests and the full OAuth flow test).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { createKey, revokeKey } from '../../src/policy/api-keys.ts';
import { buildFixture } from '../helpers/rest-server.ts';
import { startMcpFixture, TEST_ISSUER, type McpFixture } from '../helpers/mcp-server.ts';

const ajv = new Ajv({ strict: false, allErrors: true });
type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };
const problemOf = (r: ToolResult): Record<string, unknown> => {
  assert.equal(r.isError, true, 'a tool error');
  assert.equal(r.structuredContent, undefined, 'no structuredContent on errors');
  return JSON.parse(r.content[0]!.text!) as Record<string, unknown>;
};

let dir: string;
let buildsRoot: string;
let fx: McpFixture;
let signingKey: CryptoKey;
let otherKey: CryptoKey;
let publicJwk: JWK;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-mcp-'));
  buildsRoot = await buildFixture(dir);
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  otherKey = (await generateKeyPair('RS256')).privateKey;
  fx = await startMcpFixture({ buildsRoot, keys: createLocalJWKSet({ keys: [publicJwk] }) });
});
after(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const token = (
  claims: Record<string, unknown>,
  opts: {
    key?: CryptoKey;
    kid?: string;
    exp?: number | string;
    nbf?: number | string;
    aud?: string;
    iss?: string;
    typ?: string;
    iat?: number;
  } = {},
): Promise<string> => {
  const jwt = new SignJWT({ client_id: 'test-client', scope: 'openid offline_access', ...claims })
    .setProtectedHeader({ alg: 'RS256', typ: opts.typ ?? 'at+jwt', kid: opts.kid ?? 'k1' })
    .setIssuer(opts.iss ?? TEST_ISSUER)
    .setAudience(opts.aud ?? fx.mcpUrl)
    .setIssuedAt(opts.iat ?? Math.floor(fx.now() / 1000) - 10)
    .setExpirationTime(opts.exp ?? Math.floor(fx.now() / 1000) + 900);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(opts.key ?? signingKey);
};

describe('tools with an API key', () => {
  test('initialize, list the thirteen tools with input and output schemas and read-only annotations', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), [
      'check_ichra_affordability',
      'compare_plans',
      'estimate_aptc',
      'estimate_out_of_pocket',
      'get_dental_plan_details',
      'get_plan_crosswalk',
      'get_plan_details',
      'get_plan_stats',
      'list_issuers',
      'list_plan_years',
      'lookup_zip',
      'search_dental_plans',
      'search_plans',
    ]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal((tool.inputSchema as { additionalProperties?: boolean }).additionalProperties, false, `${tool.name} input closed`);
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} declares outputSchema`);
      assert.equal(tool.annotations?.readOnlyHint, true);
      assert.equal(tool.annotations?.destructiveHint, false);
    }
    assert.match(tools.find((x) => x.name === 'get_plan_details')!.description ?? '', /Requires Pro or Enterprise/);
  });

  test('every tool answers with structuredContent matching its outputSchema, the REST body, and a text summary', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const { tools } = await client.listTools();
    const calls: Array<[string, Record<string, unknown>, string]> = [
      ['search_plans', { zip: '77002', age: 40, per_page: 3 }, '/v1/health/plans?zip=77002&age=40&per_page=3'],
      ['get_plan_details', { plan_id: '11111TX0010001-01' }, '/v1/health/plans/11111TX0010001-01'],
      [
        'compare_plans',
        { plan_ids: ['11111TX0010001-01', '22222TX0020001-01'], zip: '77002', age: 40 },
        '/v1/health/plans/compare?ids=11111TX0010001-01,22222TX0020001-01&zip=77002&age=40',
      ],
      [
        'estimate_out_of_pocket',
        { plan_id: '11111TX0010001-01', zip: '77002', age: 40, scenario: 'having_baby' },
        '/v1/health/plans/11111TX0010001-01/oop-estimate?zip=77002&age=40&scenario=having_baby',
      ],
      [
        'estimate_aptc',
        { zip: '77002', household_income: 40000, household_size: 3, ages: [40, 38, 10] },
        '/v1/health/plans/aptc-estimate?zip=77002&household_income=40000&household_size=3&ages=40,38,10',
      ],
      [
        'check_ichra_affordability',
        { zip: '77002', age: 40, household_income: 52000, hra_monthly: 300 },
        '/v1/health/ichra/affordability?zip=77002&age=40&household_income=52000&hra_monthly=300',
      ],
      ['get_plan_stats', { zip: '77002', age: 40 }, '/v1/health/plans/stats?zip=77002&age=40'],
      ['search_dental_plans', { zip: '77002', age: 40 }, '/v1/health/dental/plans?zip=77002&age=40'],
      ['get_dental_plan_details', { plan_id: '55555TX0050001-01' }, '/v1/health/dental/plans/55555TX0050001-01'],
      ['lookup_zip', { zip: '77477' }, '/v1/health/zips/77477'],
      ['list_issuers', { state: 'TX' }, '/v1/health/issuers?state=TX'],
      ['list_plan_years', {}, '/v1/health/years'],
    ];
    for (const [name, args, restPath] of calls) {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      assert.notEqual(r.isError, true, `${name}: ${r.content[0]?.text}`);
      const schema = tools.find((x) => x.name === name)!.outputSchema!;
      assert.ok(ajv.validate(schema, r.structuredContent), `${name}: ${ajv.errorsText()}`);
      assert.ok(r.content[0]!.text!.length > 10 && !r.content[0]!.text!.startsWith('{'), `${name} has a readable summary`);
      assert.deepEqual(JSON.parse(r.content[1]!.text!), r.structuredContent, `${name} also returns the JSON as text`);
      const rest = await fx.rest.get(restPath);
      assert.equal(rest.status, 200, restPath);
      assert.deepEqual(r.structuredContent, await rest.json(), `${name} equals the REST body`);
    }
    // The crosswalk tool applies the REST rule: no crosswalk loaded in the fixture, so 2025 is a 404.
    const cw = problemOf(
      (await client.callTool({
        name: 'get_plan_crosswalk',
        arguments: { plan_id: '11111TX0010001', year: 2025, state: 'TX' },
      })) as ToolResult,
    );
    assert.equal(cw.status, 404);
    assert.equal(cw.detail, 'Crosswalk data for 2025 to 2026 is not loaded on this server.');
  });

  test('a Free key gets tier errors exactly where REST answers 402', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.free);
    t.after(() => client.close());
    for (const [name, args] of [
      ['get_plan_details', { plan_id: '11111TX0010001-01' }],
      ['compare_plans', { plan_ids: ['11111TX0010001-01', '22222TX0020001-01'], zip: '77002', age: 40 }],
      ['estimate_out_of_pocket', { plan_id: '11111TX0010001-01', zip: '77002', age: 40, scenario: 'low' }],
      ['estimate_aptc', { zip: '77002', household_income: 40000, household_size: 1, ages: [40] }],
      ['get_plan_crosswalk', { plan_id: '11111TX0010001', year: 2025, state: 'TX' }],
      ['search_plans', { zip: '77002', age: 40, issuer: 'lone' }],
    ] as const) {
      const p = problemOf((await client.callTool({ name, arguments: args })) as ToolResult);
      assert.equal(p.status, 402, name);
      assert.equal(p.required_tier, 'pro');
      assert.equal(p.upgrade, 'https://hpd.test/pricing');
      assert.equal(p.type, 'http://api.test/problems/payment-required');
    }
    const ok = (await client.callTool({ name: 'search_plans', arguments: { zip: '77002', age: 40 } })) as ToolResult;
    assert.notEqual(ok.isError, true);
  });

  test('validation failures are tool errors naming the tool’s own fields; an unknown tool is a JSON-RPC error', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const p = problemOf(
      (await client.callTool({
        name: 'compare_plans',
        arguments: { plan_ids: ['11111TX0010001-01'], zip: '7700', age: 70 },
      })) as ToolResult,
    );
    assert.equal(p.status, 400);
    assert.deepEqual((p.errors as Array<{ field: string }>).map((e) => e.field).sort(), ['age', 'plan_ids', 'zip']);
    assert.equal(p.instance, '/v1/health/plans/compare');
    const missing = problemOf((await client.callTool({ name: 'get_plan_details', arguments: {} })) as ToolResult);
    assert.equal(missing.status, 400);
    assert.equal(missing.instance, '/v1/health/plans/{plan_id}');
    assert.deepEqual(
      (missing.errors as Array<{ field: string; message: string }>).map((e) => [e.field, e.message]),
      [['plan_id', 'Required']],
    );
    const nf = problemOf((await client.callTool({ name: 'get_plan_details', arguments: { plan_id: '99999XX0000000-00' } })) as ToolResult);
    assert.equal(nf.status, 404);
    assert.equal(nf.detail, 'Plan 99999XX0000000-00 not found.');
    await assert.rejects(
      client.callTool({ name: 'frobnicate', arguments: {} }),
      (err: unknown) => err instanceof McpError && err.code === -32602,
    );
  });

  test('errors say what is wrong with the argument sent, by the name it was sent under', async (t) => {
    const { client } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> =>
      problemOf((await client.callTool({ name, arguments: args })) as ToolResult);
    // An empty list is present and empty, not missing.
    const empty = await call('estimate_aptc', { zip: '77002', household_income: 40000, household_size: 1, ages: [] });
    assert.equal(empty.detail, 'Invalid ages: Array must contain at least 1 element(s).');
    assert.deepEqual(empty.errors, [{ field: 'ages', message: 'Array must contain at least 1 element(s)' }]);
    // The detail names the tool's argument, as errors[].field does.
    const one = await call('compare_plans', { plan_ids: ['11111TX0010001-01'], zip: '77002', age: 40 });
    assert.equal(one.detail, 'Invalid plan_ids: Array must contain at least 2 element(s).');
    assert.deepEqual(one.errors, [{ field: 'plan_ids', message: 'Array must contain at least 2 element(s)' }]);
    // An unknown argument gets the closest name, as REST's unknown parameter does.
    const typo = await call('search_plans', { zip: '77002', age: 40, metal: 'silver' });
    assert.equal(typo.detail, 'Unknown parameter metal (did you mean metal_level?).');
    // The JSON-RPC message carries no "MCP error -32602:" of its own: the SDK client adds it once.
    await assert.rejects(
      client.callTool({ name: 'search_plan', arguments: {} }),
      (err: unknown) =>
        err instanceof McpError && err.message === 'MCP error -32602: Unknown tool search_plan (did you mean search_plans?)',
    );
  });

  test('each tools/call takes one unit of the user’s daily counter, shared with REST', async (t) => {
    const local = await startMcpFixture({ buildsRoot, limits: { free: 3 } });
    t.after(() => local.close());
    assert.equal((await local.rest.get('/v1/health/years', { tier: 'free' })).status, 200);
    const { client } = await local.connect(local.rest.keys.free);
    t.after(() => client.close());
    await client.listTools(); // listing does not count
    assert.notEqual(((await client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError, true);
    assert.notEqual(((await client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError, true);
    const refused = problemOf((await client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult);
    assert.equal(refused.status, 429);
    assert.equal(refused.upgrade, 'https://hpd.test/pricing');
    const rest = await local.rest.get('/v1/health/years', { tier: 'free' });
    assert.equal(rest.status, 429, 'REST sees the same exhausted counter');
  });
});

describe('HTTP rules of the MCP endpoint', () => {
  test('no credential → 401 pointing at the protected-resource metadata; a bad one adds error="invalid_token"', async () => {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    };
    const none = await fetch(fx.mcpUrl, init);
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer resource_metadata="${fx.mcpUrl}/.well-known/oauth-protected-resource", scope="openid profile email offline_access"`,
    );
    assert.equal(((await none.json()) as { type: string }).type, 'http://api.test/problems/unauthorized');
    const bad = await fetch(fx.mcpUrl, { ...init, headers: { ...init.headers, authorization: `Bearer hpd_${'0'.repeat(40)}` } });
    assert.equal(bad.status, 401);
    assert.match(
      bad.headers.get('www-authenticate') ?? '',
      /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/mcp\/\.well-known\/oauth-protected-resource"$/,
    );
  });

  test('without an Authorization header, a key in the endpoint URL (as other MCP servers take it) is named in the 401', async () => {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    };
    const r = await fetch(`${fx.mcpUrl}?api_key=hpd_${'0'.repeat(40)}`, init);
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata=/, 'the challenge of a missing credential');
    assert.equal(
      ((await r.json()) as { detail: string }).detail,
      'Missing or invalid API key. The query parameter api_key is not read: send the key in the Authorization header (Authorization: Bearer <key>).',
    );
  });

  test('a missing, misplaced, malformed or unknown API key gets the REST front’s 401 detail word for word; a refused access token names its reason', async () => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    const mcp = async (query: string, authorization?: string): Promise<string> => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      if (authorization !== undefined) headers.authorization = authorization;
      const r = await fetch(`${fx.mcpUrl}${query}`, { method: 'POST', headers, body: initialize });
      assert.equal(r.status, 401, `MCP ${query} ${authorization}`);
      return ((await r.json()) as { detail: string }).detail;
    };
    const rest = async (query: string, authorization?: string): Promise<string> => {
      const r = await fx.rest.get(`/v1/health/years${query}`, {
        tier: null,
        headers: authorization === undefined ? {} : { authorization },
      });
      assert.equal(r.status, 401, `REST ${query} ${authorization}`);
      return ((await r.json()) as { detail: string }).detail;
    };
    const cases: Array<[string, string | undefined]> = [
      ['', undefined],
      ['?api_key=hpd_x', undefined],
      ['?token=abc', undefined],
      ['', `Bearer hpd_${'0'.repeat(40)}`],
      ['', 'Bearer not-a-credential'],
      ['', 'Bearer '],
    ];
    for (const [query, authorization] of cases) {
      const detail = await rest(query, authorization);
      assert.equal(await mcp(query, authorization), detail, `${query} ${authorization}`);
    }
    assert.equal(await mcp('', 'Bearer not-a-credential'), 'Missing or invalid API key.');
    const expired = await token({ sub: 'usr_token_pro' }, { exp: Math.floor(fx.now() / 1000) - 120 });
    assert.equal(await mcp('', `Bearer ${expired}`), 'The access token expired.');
  });

  test('an unknown path (404) and a method a path does not take (405) get the REST front’s detail word for word', async () => {
    const origin = new URL(fx.mcpUrl).origin;
    const detailOf = async (r: Response, status: number): Promise<string> => {
      assert.equal(r.status, status, r.url);
      return ((await r.json()) as { detail: string }).detail;
    };
    const restMissing = await detailOf(await fx.rest.get('/no/such/path'), 404);
    assert.equal(await detailOf(await fetch(`${origin}/no/such/path`), 404), restMissing);
    assert.equal(restMissing, 'No route matches /no/such/path.');
    const restPut = await detailOf(await fx.rest.get('/v1/health/years', { method: 'PUT' }), 405);
    assert.equal(await detailOf(await fetch(`${fx.mcpUrl}/.well-known/oauth-protected-resource`, { method: 'PUT' }), 405), restPut);
    assert.equal(restPut, 'Method PUT is not allowed. Allowed: GET, HEAD.');
  });

  test('protected-resource metadata (RFC 9728) at the resource path and the path-inserted form', async () => {
    const origin = new URL(fx.mcpUrl).origin;
    for (const url of [`${fx.mcpUrl}/.well-known/oauth-protected-resource`, `${origin}/.well-known/oauth-protected-resource/mcp`]) {
      const r = await fetch(url);
      assert.equal(r.status, 200, url);
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(await r.json(), {
        resource: fx.mcpUrl,
        authorization_servers: [TEST_ISSUER],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        bearer_methods_supported: ['header'],
        resource_signing_alg_values_supported: ['RS256'],
      });
    }
  });

  test('a foreign Origin is refused with 403; a missing session id on a non-initialize request is 400', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${fx.rest.keys.pro}`,
    };
    const foreign = await fetch(fx.mcpUrl, { method: 'POST', headers: { ...headers, origin: 'https://evil.example' }, body: '{}' });
    assert.equal(foreign.status, 403);
    const noSession = await fetch(fx.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(noSession.status, 400);
  });

  test('an idle session expires after 30 minutes (injected clock) → 404; the client starts a new one and goes on', async (t) => {
    const { client, transport } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const first = transport.sessionId!;
    fx.advance(29 * 60_000);
    assert.notEqual(
      ((await client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError,
      true,
      'activity within 30 minutes keeps it',
    );
    fx.advance(29 * 60_000);
    assert.notEqual(
      ((await client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError,
      true,
      'the timer slides with activity',
    );
    fx.advance(31 * 60_000);
    await assert.rejects(client.callTool({ name: 'list_plan_years', arguments: {} }), /404|Session not found/);
    const raw = await fetch(fx.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${fx.rest.keys.pro}`,
        'mcp-session-id': first,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    assert.equal(raw.status, 404);
    const again = await fx.connect(fx.rest.keys.pro);
    t.after(() => again.client.close());
    assert.notEqual(again.transport.sessionId, first);
    assert.notEqual(((await again.client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError, true);
  });

  test('a session belongs to its principal; DELETE ends it', async (t) => {
    const { client, transport } = await fx.connect(fx.rest.keys.pro);
    t.after(() => client.close());
    const sid = transport.sessionId!;
    const asOther = await fetch(fx.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${fx.rest.keys.enterprise}`,
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(asOther.status, 404, 'another user cannot use the session');
    await transport.terminateSession();
    const after = await fetch(fx.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${fx.rest.keys.pro}`,
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    assert.equal(after.status, 404);
  });
});

describe('OAuth access tokens (RS256 JWTs against the authorization server’s keys)', () => {
  test('a valid token works; the tier comes from the user registry by sub (unknown users are Free)', async (t) => {
    await createKey(fx.rest.store, { tier: 'pro', userId: 'usr_token_pro', now: fx.rest.now });
    const { client } = await fx.connect(await token({ sub: 'usr_token_pro' }));
    t.after(() => client.close());
    assert.notEqual(
      ((await client.callTool({ name: 'get_plan_details', arguments: { plan_id: '11111TX0010001-01' } })) as ToolResult).isError,
      true,
    );
    const stranger = await fx.connect(await token({ sub: 'usr_nobody' }));
    t.after(() => stranger.client.close());
    assert.equal(
      problemOf((await stranger.client.callTool({ name: 'get_plan_details', arguments: { plan_id: '11111TX0010001-01' } })) as ToolResult)
        .status,
      402,
    );
  });

  test('a user’s token and API key share one daily counter', async (t) => {
    const local = await startMcpFixture({ buildsRoot, limits: { free: 2 }, keys: createLocalJWKSet({ keys: [publicJwk] }) });
    t.after(() => local.close());
    const { plaintext } = await createKey(local.rest.store, { tier: 'free', userId: 'usr_shared', now: local.rest.now });
    const jwt = await new SignJWT({ client_id: 'c', sub: 'usr_shared' })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'k1' })
      .setIssuer(TEST_ISSUER)
      .setAudience(local.mcpUrl)
      .setIssuedAt(Math.floor(local.now() / 1000))
      .setExpirationTime(Math.floor(local.now() / 1000) + 900)
      .sign(signingKey);
    const viaToken = await local.connect(jwt);
    t.after(() => viaToken.client.close());
    assert.notEqual(((await viaToken.client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).isError, true);
    assert.equal((await fetch(`${local.rest.url}/v1/health/years`, { headers: { authorization: `Bearer ${plaintext}` } })).status, 200);
    assert.equal(problemOf((await viaToken.client.callTool({ name: 'list_plan_years', arguments: {} })) as ToolResult).status, 429);
  });

  test('refused: expired, not yet valid, wrong audience, wrong issuer, alg none, HS256 with the public key, tampered, unknown key, not at+jwt, too old, revoked API key', async () => {
    const now = Math.floor(fx.now() / 1000);
    const pem = Buffer.from(JSON.stringify(publicJwk));
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { sub: 'usr_token_pro', client_id: 'c', iss: TEST_ISSUER, aud: fx.mcpUrl, iat: now, exp: now + 900 };
    const valid = await token({ sub: 'usr_token_pro' });
    const [h, p, s] = valid.split('.') as [string, string, string];
    const tampered = `${h}.${b64({ ...claims, sub: 'usr_admin' })}.${s}`;
    const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' }).sign(pem);
    const { plaintext } = await createKey(fx.rest.store, { tier: 'pro', userId: 'usr_revoked', now: fx.rest.now });
    const keyId = [...fx.rest.store.listKeys()].find((k) => k.user_id === 'usr_revoked')!.id;
    await revokeKey(fx.rest.store, keyId, fx.rest.now);
    const cases: Array<[string, string]> = [
      ['expired', await token({ sub: 'usr_token_pro' }, { exp: now - 120 })],
      ['not yet valid', await token({ sub: 'usr_token_pro' }, { nbf: now + 600 })],
      ['wrong audience', await token({ sub: 'usr_token_pro' }, { aud: 'http://127.0.0.1:1/other' })],
      ['wrong issuer', await token({ sub: 'usr_token_pro' }, { iss: 'http://evil.test' })],
      ['alg none', `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`],
      ['HS256 with the public key', hs256],
      ['tampered payload', tampered],
      ['signed by another key', await token({ sub: 'usr_token_pro' }, { key: otherKey })],
      // RFC 9068: typed as an access token, and not older than an hour.
      ['typed JWT, not at+jwt (an ID token)', await token({ sub: 'usr_token_pro' }, { typ: 'JWT' })],
      ['issued two hours ago, still unexpired', await token({ sub: 'usr_token_pro' }, { iat: now - 7200, exp: now + 900 })],
      ['revoked API key', plaintext],
    ];
    assert.ok(p.length > 0);
    for (const [what, bearer] of cases) {
      const r = await fetch(fx.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      });
      assert.equal(r.status, 401, what);
      assert.match(r.headers.get('www-authenticate') ?? '', /error="invalid_token"/, what);
    }
    // Within the 30 s tolerance an expired token still passes.
    const r = await fetch(fx.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await token({ sub: 'usr_token_pro' }, { exp: now - 10 })}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    assert.equal(r.status, 200);
  });
});
