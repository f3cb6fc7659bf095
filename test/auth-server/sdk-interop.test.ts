/**
 * Interoperability with the MCP TypeScript SDK's OAuth client functions (the code Claude Desktop,
 * Inspector and SDK-based clients run): its discovery, dynamic registration, authorization URL (which
 * sends `resource` as `new URL(resource).href`, i.e. with a trailing slash for a bare origin, and adds
 * prompt=consent for offline_access), code exchange and refresh all work against this server, and the
 * audience stays the configured identifier.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { browse, CookieJar, followToCallback, jwtPart, location, MCP_RESOURCE, REDIRECT_URI, startFixture } from './oauth-test-client.ts';

test('MCP SDK client: discover → register → authorize (sign-up) → exchange → refresh', async (t) => {
  const { server, store } = await startFixture(t);
  const metadata = await discoverAuthorizationServerMetadata(server.url);
  assert.ok(metadata !== undefined);
  assert.equal(metadata.issuer, server.url);

  const clientInformation = await registerClient(server.url, {
    metadata,
    clientMetadata: {
      client_name: 'SDK client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
  });
  const resource = new URL(MCP_RESOURCE);
  assert.equal(resource.href, `${MCP_RESOURCE}/`, 'the SDK form has the trailing slash');
  const { authorizationUrl, codeVerifier } = await startAuthorization(server.url, {
    metadata,
    clientInformation,
    redirectUrl: REDIRECT_URI,
    scope: 'openid profile email offline_access',
    state: 'sdk-state',
    resource,
  });

  const jar = new CookieJar();
  const start = await browse(jar, authorizationUrl.href);
  const interaction = location(start, server.url);
  await (await browse(jar, interaction)).arrayBuffer();
  const signup = await browse(jar, `${interaction}/signup`, {
    form: { email: 'sdk@example.org', password: 'sdk-password-1', confirm: 'sdk-password-1' },
  });
  const callback = await followToCallback(jar, signup, server.url);
  assert.ok(callback instanceof URL);
  assert.equal(callback.searchParams.get('state'), 'sdk-state');

  const tokens = await exchangeAuthorization(server.url, {
    metadata,
    clientInformation,
    authorizationCode: callback.searchParams.get('code') ?? '',
    codeVerifier,
    redirectUri: REDIRECT_URI,
    resource,
  });
  const payload = jwtPart(tokens.access_token, 1);
  assert.equal(payload.aud, MCP_RESOURCE);
  assert.equal(payload.sub, store.listUsers()[0].id);
  assert.equal(payload.scope, 'openid profile email offline_access');
  assert.equal(typeof tokens.refresh_token, 'string');

  const refreshed = await refreshAuthorization(server.url, {
    metadata,
    clientInformation,
    refreshToken: tokens.refresh_token ?? '',
    resource,
  });
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
  assert.equal(jwtPart(refreshed.access_token, 1).aud, MCP_RESOURCE);
});
