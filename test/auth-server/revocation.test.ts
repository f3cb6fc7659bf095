/**
 * RFC 7009 at /token/revocation, for the server's JWT access tokens and its refresh tokens, as the MCP
 * endpoint's verifier sees the result: a revoked access token is refused at once while its refresh
 * token keeps working (one device signs out, the others stay), a revoked refresh token takes its
 * grant's access tokens with it, a client cannot revoke another's tokens, garbage gets the same 200,
 * and the client must authenticate as at the token endpoint. Access tokens carry no tier claim.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredentialVerifier, type CredentialVerifier } from '../../src/mcp/credentials.ts';
import type { AuthServer } from '../../src/auth-server/index.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { fullFlow, jwtPart, MCP_RESOURCE, registerClient, startFixture, tokenRequest } from './oauth-test-client.ts';

const PASSWORD = 'correct horse battery';

function verifierFor(server: AuthServer, store: StateStore): CredentialVerifier {
  return createCredentialVerifier({
    issuer: server.url,
    resource: MCP_RESOURCE,
    store,
    grantActive: server.grantActive,
    accessTokenRevoked: server.accessTokenRevoked,
  });
}

async function revoke(
  issuer: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`${issuer}/token/revocation`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

async function accepted(verifier: CredentialVerifier, token: string): Promise<boolean | string> {
  const r = await verifier.verify(`Bearer ${token}`);
  return r.ok ? true : r.description;
}

test('a client revokes its access token: 200, the MCP verifier refuses it at once, its refresh token still works', async (t) => {
  const { server, store } = await startFixture(t);
  const verifier = verifierFor(server, store);
  const { client, tokens } = await fullFlow(server.url, { email: 'ann@example.org', password: PASSWORD, mode: 'signup' });
  const access = tokens.access_token!;
  assert.equal(await accepted(verifier, access), true);

  const r = await revoke(server.url, { token: access, token_type_hint: 'access_token', client_id: client.client_id });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.body, '');
  assert.equal(await accepted(verifier, access), 'The access token was revoked');
  assert.equal(await server.accessTokenRevoked(String(jwtPart(access, 1).jti)), true);

  const refreshed = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token!,
    client_id: client.client_id,
  });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(await accepted(verifier, refreshed.body.access_token!), true, 'the grant still stands');
  assert.equal(await accepted(verifier, access), 'The access token was revoked', 'and the revoked one stays revoked');

  const again = await revoke(server.url, { token: access, client_id: client.client_id });
  assert.equal(again.status, 200, 'revoking twice is fine');
});

test('token_type_hint is only a hint: an access token sent as refresh_token is revoked, and a refresh token sent as access_token too', async (t) => {
  const { server, store } = await startFixture(t);
  const verifier = verifierFor(server, store);
  const { client, tokens } = await fullFlow(server.url, { email: 'bo@example.org', password: PASSWORD, mode: 'signup' });
  const r = await revoke(server.url, { token: tokens.access_token!, token_type_hint: 'refresh_token', client_id: client.client_id });
  assert.equal(r.status, 200, r.body);
  assert.equal(await accepted(verifier, tokens.access_token!), 'The access token was revoked');

  const second = await fullFlow(server.url, { email: 'bo@example.org', password: PASSWORD, mode: 'login', client });
  const rr = await revoke(server.url, {
    token: second.tokens.refresh_token!,
    token_type_hint: 'access_token',
    client_id: client.client_id,
  });
  assert.equal(rr.status, 200, rr.body);
  const refused = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: second.tokens.refresh_token!,
    client_id: client.client_id,
  });
  assert.equal(refused.body.error, 'invalid_grant');
  // The refresh token's grant is gone, and with it every access token issued under it.
  assert.equal(await accepted(verifier, second.tokens.access_token!), 'The access token was revoked (its grant no longer stands)');
});

test('another client’s revocation of a token answers 200 and changes nothing; garbage and unknown tokens get 200', async (t) => {
  const { server, store } = await startFixture(t);
  const verifier = verifierFor(server, store);
  const { client, tokens } = await fullFlow(server.url, { email: 'cy@example.org', password: PASSWORD, mode: 'signup' });
  const other = await registerClient(server.url);
  const confidential = await registerClient(server.url, { token_endpoint_auth_method: 'client_secret_basic' });
  const basic = `Basic ${Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString('base64')}`;

  for (const token of [tokens.access_token!, tokens.refresh_token!]) {
    assert.equal((await revoke(server.url, { token, client_id: other.client_id })).status, 200);
    assert.equal((await revoke(server.url, { token }, { authorization: basic })).status, 200);
  }
  assert.equal(await accepted(verifier, tokens.access_token!), true, 'the access token still works');
  const refreshed = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token!,
    client_id: client.client_id,
  });
  assert.equal(refreshed.status, 200, 'the refresh token still works');

  // A well-formed JWT the server did not sign (its own token with the signature of another), plain garbage, and a JWT header on nothing.
  const [h, p] = tokens.access_token!.split('.');
  const forged = `${h}.${p}.${Buffer.from('x'.repeat(256)).toString('base64url')}`;
  for (const token of [forged, 'not-a-token', `${Buffer.from('{"alg":"none"}').toString('base64url')}.e30.`]) {
    const r = await revoke(server.url, { token, client_id: client.client_id });
    assert.equal(r.status, 200, `${token.slice(0, 20)}…: ${r.body}`);
  }
  assert.equal(await accepted(verifier, tokens.access_token!), true);
});

test('the revocation endpoint authenticates the client as the token endpoint does', async (t) => {
  const { server, store } = await startFixture(t);
  const verifier = verifierFor(server, store);
  const { client, tokens } = await fullFlow(server.url, { email: 'di@example.org', password: PASSWORD, mode: 'signup' });
  const confidential = await registerClient(server.url, { token_endpoint_auth_method: 'client_secret_basic' });

  const anonymous = await revoke(server.url, { token: tokens.access_token! });
  assert.equal(anonymous.status, 400, anonymous.body);
  assert.equal(JSON.parse(anonymous.body).error, 'invalid_request');
  const unknown = await revoke(server.url, { token: tokens.access_token!, client_id: 'no-such-client' });
  assert.equal(unknown.status, 401, unknown.body);
  assert.equal(JSON.parse(unknown.body).error, 'invalid_client');
  const wrongSecret = await revoke(
    server.url,
    { token: tokens.access_token! },
    { authorization: `Basic ${Buffer.from(`${confidential.client_id}:wrong`).toString('base64')}` },
  );
  assert.equal(wrongSecret.status, 401, wrongSecret.body);
  assert.equal(JSON.parse(wrongSecret.body).error, 'invalid_client');
  const noToken = await revoke(server.url, { client_id: client.client_id });
  assert.equal(noToken.status, 400);
  assert.equal(JSON.parse(noToken.body).error, 'invalid_request');
  assert.equal(await accepted(verifier, tokens.access_token!), true, 'none of these revoked anything');
});

test('an access token minted before a tier change carries no tier claim to go stale', async (t) => {
  const { server, store } = await startFixture(t);
  const { client, tokens } = await fullFlow(server.url, { email: 'ed@example.org', password: PASSWORD, mode: 'signup' });
  const before = jwtPart(tokens.access_token!, 1);
  assert.equal('tier' in before, false, JSON.stringify(before));
  // What `hpd users set-tier` does.
  await store.updateUser(String(before.sub), (u) =>
    u === undefined ? undefined : { ...u, tier: 'pro', updated_at: new Date().toISOString() },
  );
  const r = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token!,
    client_id: client.client_id,
  });
  assert.equal(r.status, 200);
  assert.equal('tier' in jwtPart(r.body.access_token!, 1), false);
  const who = await verifierFor(server, store).verify(`Bearer ${tokens.access_token!}`);
  assert.ok(who.ok);
  assert.equal(who.principal.tier, 'pro', 'the MCP endpoint reads the current tier, even from the older token');
});
