/**
 * The embedded authorization server end to end, driven headlessly the way an MCP client and a browser
 * would: discovery, dynamic registration, PKCE authorization with sign-up or log-in on our page, code
 * exchange, refresh-token rotation, restarts on the same state directory, and the error
 * paths a person or a client can hit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { OAUTH_FILE, SECRETS_FILE } from '../../src/auth-server/index.ts';
import {
  authorizeUrl,
  browse,
  CookieJar,
  followToCallback,
  fullFlow,
  jwtPart,
  location,
  MCP_RESOURCE,
  openInteraction,
  pkcePair,
  refusalPage,
  REDIRECT_URI,
  registerClient,
  startFixture,
  submitAndFollow,
  tokenRequest,
} from './oauth-test-client.ts';

const PASSWORD = 'correct horse battery';

interface Metadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  jwks_uri: string;
  revocation_endpoint: string;
  code_challenge_methods_supported: string[];
  grant_types_supported: string[];
  response_types_supported: string[];
  scopes_supported: string[];
  token_endpoint_auth_methods_supported: string[];
}

test('discovery: both metadata documents, same endpoints, S256 only, CORS-open', async (t) => {
  const { server } = await startFixture(t);
  const docs: Metadata[] = [];
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const res = await fetch(`${server.url}${path}`, { headers: { origin: 'https://inspector.example' } });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://inspector.example', path);
    const doc = (await res.json()) as Metadata;
    assert.equal(doc.issuer, server.url);
    assert.equal(doc.authorization_endpoint, `${server.url}/auth`);
    assert.equal(doc.token_endpoint, `${server.url}/token`);
    assert.equal(doc.registration_endpoint, `${server.url}/reg`);
    assert.equal(doc.jwks_uri, `${server.url}/jwks`);
    assert.equal(doc.revocation_endpoint, `${server.url}/token/revocation`);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(doc.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.scopes_supported, ['openid', 'profile', 'email', 'offline_access']);
    assert.ok(doc.token_endpoint_auth_methods_supported.includes('none'));
    assert.equal((doc as unknown as Record<string, unknown>).userinfo_endpoint, undefined);
    docs.push(doc);
  }
  assert.deepEqual(docs[0], docs[1]);
  const noOrigin = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
  assert.equal(noOrigin.headers.get('access-control-allow-origin'), '*');
  await noOrigin.arrayBuffer();

  const jwks = (await (await fetch(`${server.url}/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
  assert.equal(jwks.keys.length, 1);
  assert.equal(jwks.keys[0].kty, 'RSA');
  assert.equal(jwks.keys[0].alg, 'RS256');
  assert.equal(typeof jwks.keys[0].kid, 'string');
  assert.equal(jwks.keys[0].d, undefined, 'the private part is never published');

  // Browser-based clients (MCP Inspector) register cross-origin.
  const preflight = await fetch(`${server.url}/reg`, {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://localhost:6274');
  assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
});

test('dynamic registration of a public client', async (t) => {
  const { server } = await startFixture(t);
  const res = await fetch(`${server.url}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:6274' },
    body: JSON.stringify({
      client_name: 'Claude',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:6274');
  const client = (await res.json()) as Record<string, unknown>;
  assert.equal(typeof client.client_id, 'string');
  assert.equal(client.client_secret, undefined, 'public clients get no secret');
  assert.equal(client.token_endpoint_auth_method, 'none');
  assert.deepEqual(client.grant_types, ['authorization_code', 'refresh_token']);
  assert.deepEqual(client.redirect_uris, [REDIRECT_URI]);

  // A client that names no grant types still may refresh (our clientDefaults).
  const minimal = await registerClient(server.url, { grant_types: undefined, response_types: undefined });
  assert.deepEqual(minimal.grant_types, ['authorization_code', 'refresh_token']);

  const bad = await fetch(`${server.url}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['not a url'], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: string }).error, 'invalid_redirect_uri');
});

test('pre-registered first-party clients work without registration; a bad one stops startup cleanly', async (t) => {
  const { server } = await startFixture(t, {
    clients: [
      {
        client_id: 'hpd-cli',
        client_name: 'hpd CLI',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
  });
  const { tokens } = await fullFlow(server.url, {
    email: 'pat@example.org',
    password: PASSWORD,
    mode: 'signup',
    client: {
      client_id: 'hpd-cli',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    },
  });
  assert.equal(jwtPart(tokens.access_token ?? '', 1).client_id, 'hpd-cli');

  const fx = await startFixture(t);
  await fx.server.close();
  await assert.rejects(
    fx.restart({
      port: fx.server.port,
      clients: [{ client_id: 'broken', redirect_uris: ['not a url'], token_endpoint_auth_method: 'none' }],
    }),
    /pre-registered client "broken" is invalid: redirect_uris/,
  );
  // Nothing was left listening or open: the same port and state directory start again.
  const again = await fx.restart({ port: fx.server.port });
  assert.equal(again.port, fx.server.port);
});

test('sign-up flow: PKCE S256 + resource → code → RS256 at+jwt for the MCP audience with the tier; refresh token issued', async (t) => {
  const { server, store } = await startFixture(t);
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();

  const authRes = await browse(jar, authorizeUrl(server.url, { clientId: client.client_id, challenge, state: 'xyz-state' }));
  assert.equal(authRes.status, 303);
  const interactionUrl = location(authRes, server.url);
  assert.match(new URL(interactionUrl).pathname, /^\/interaction\/[A-Za-z0-9_-]+$/);

  const page = await browse(jar, interactionUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  const html = await page.text();
  assert.match(html, /<h2 id="login-heading">Log in<\/h2>/);
  assert.match(html, /<h2 id="signup-heading">Create an account<\/h2>/);
  assert.match(html, /Test MCP Client/);
  assert.match(html, /127\.0\.0\.1:53682/, 'names where the browser will return');
  assert.doesNotMatch(html, /<script|https?:\/\/(?!127\.0\.0\.1)/, 'no script, no external assets');

  const signup = await browse(jar, `${interactionUrl}/signup`, {
    form: { email: '  Ann@Example.ORG ', password: PASSWORD, confirm: PASSWORD },
  });
  assert.equal(signup.status, 303);
  const callback = await followToCallback(jar, signup, server.url);
  assert.ok(callback instanceof URL, 'the flow reaches the callback');
  assert.equal(callback.origin + callback.pathname, REDIRECT_URI);
  assert.equal(callback.searchParams.get('state'), 'xyz-state');
  assert.equal(callback.searchParams.get('iss'), server.url);
  const code = callback.searchParams.get('code');
  assert.ok(code !== null && code.length > 20);

  const users = store.listUsers();
  assert.equal(users.length, 1);
  const user = users[0];
  assert.match(user.id, /^usr_[0-9a-f]{16}$/);
  assert.equal(user.email, 'ann@example.org', 'trimmed and lower-cased');
  assert.equal(user.tier, 'free');

  const { status, body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
    resource: MCP_RESOURCE,
  });
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.token_type, 'Bearer');
  assert.equal(body.expires_in, 900);
  assert.equal(typeof body.refresh_token, 'string');
  assert.equal(typeof body.id_token, 'string');
  const at = body.access_token ?? '';
  assert.equal(at.split('.').length, 3);
  assert.ok(at.startsWith('eyJ'));
  const header = jwtPart(at, 0);
  assert.equal(header.alg, 'RS256');
  assert.equal(header.typ, 'at+jwt');
  const payload = jwtPart(at, 1);
  assert.equal(payload.iss, server.url);
  assert.equal(payload.aud, MCP_RESOURCE);
  assert.equal(payload.sub, user.id);
  assert.equal(payload.client_id, client.client_id);
  assert.equal(payload.scope, 'openid offline_access');
  assert.equal(payload.tier, undefined, 'no tier claim: the MCP endpoint reads the current tier');
  assert.equal(Number(payload.exp) - Number(payload.iat), 900);
  assert.equal(typeof payload.jti, 'string');

  // What the MCP server does (stack notes §8).
  const jwks = createRemoteJWKSet(new URL(`${server.url}/jwks`));
  const verified = await jwtVerify(at, jwks, {
    issuer: server.url,
    audience: [MCP_RESOURCE, `${MCP_RESOURCE}/`],
    algorithms: ['RS256'],
    typ: 'at+jwt',
    requiredClaims: ['exp', 'iat', 'sub', 'client_id'],
  });
  assert.equal(verified.protectedHeader.kid, header.kid);
  assert.equal(verified.payload.sub, user.id);

  // The code is single-use.
  const again = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  assert.equal(again.status, 400);
  assert.equal(again.body.error, 'invalid_grant');
});

test('refresh: new access token and a NEW refresh token; the old one is refused, and its reuse revokes the family', async (t) => {
  const { server } = await startFixture(t);
  const { client, tokens } = await fullFlow(server.url, { email: 'bob@example.org', password: PASSWORD, mode: 'signup' });
  const first = tokens.refresh_token ?? '';

  const r1 = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: first, client_id: client.client_id });
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  const second = r1.body.refresh_token ?? '';
  assert.ok(second !== '' && second !== first, 'rotated');
  const at = r1.body.access_token ?? '';
  assert.notEqual(at, tokens.access_token);
  const payload = jwtPart(at, 1);
  assert.equal(payload.aud, MCP_RESOURCE, 'the granted resource is used when the refresh names none');
  assert.equal(jwtPart(at, 0).typ, 'at+jwt');

  // The rotated-out token fails…
  const reuse = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: first, client_id: client.client_id });
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, 'invalid_grant');
  // …and, as OAuth 2.1 recommends for detected reuse, the whole grant is revoked with it.
  const after = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: second, client_id: client.client_id });
  assert.equal(after.body.error, 'invalid_grant');
});

test('refresh tokens are issued only with offline_access; a request without resource still gets an MCP-audience JWT', async (t) => {
  const { server } = await startFixture(t);
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge, resource: null, scope: 'openid email' });
  const callback = await submitAndFollow(jar, server.url, url, 'signup', {
    email: 'cy@example.org',
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const { status, body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.refresh_token, undefined);
  const payload = jwtPart(body.access_token ?? '', 1);
  assert.equal(payload.aud, MCP_RESOURCE);
  assert.equal(payload.scope, 'openid email');
  // The ID token carries the e-mail claim for the email scope.
  const idToken = jwtPart(body.id_token ?? '', 1);
  assert.equal(idToken.email, 'cy@example.org');
  assert.equal(idToken.email_verified, false);
});

test('a request without scope gets the default scopes (RFC 6749 §3.3) instead of access_denied', async (t) => {
  const { server } = await startFixture(t);
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge, scope: null });
  const callback = await submitAndFollow(jar, server.url, url, 'signup', {
    email: 'dee@example.org',
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const { body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  assert.equal(jwtPart(body.access_token ?? '', 1).scope, 'openid profile email offline_access');
  assert.equal(typeof body.refresh_token, 'string');
});

test('resource indicators: one trailing slash tolerated (audience stays canonical), anything else is invalid_target', async (t) => {
  const { server } = await startFixture(t);
  const { tokens } = await fullFlow(server.url, {
    email: 'eve@example.org',
    password: PASSWORD,
    mode: 'signup',
    resource: `${MCP_RESOURCE}/`,
  });
  assert.equal(jwtPart(tokens.access_token ?? '', 1).aud, MCP_RESOURCE);

  const client = await registerClient(server.url);
  for (const resource of ['http://127.0.0.1:9999', `${MCP_RESOURCE}/other`, `${MCP_RESOURCE}//`]) {
    const jar = new CookieJar();
    const res = await browse(jar, authorizeUrl(server.url, { clientId: client.client_id, challenge: pkcePair().challenge, resource }));
    // A dynamically registered client gets its error through a page and a click, not a redirect.
    const { continueTo } = await refusalPage(res);
    assert.ok(continueTo !== undefined, resource);
    assert.ok(continueTo.href.startsWith(REDIRECT_URI), resource);
    assert.equal(continueTo.searchParams.get('error'), 'invalid_target', resource);
  }
});

test('PKCE is required and S256 only; a wrong verifier fails the exchange', async (t) => {
  const { server } = await startFixture(t);
  const client = await registerClient(server.url);

  const cases: Array<{ name: string; challenge: string | null; method: string | null }> = [
    { name: 'no code_challenge', challenge: null, method: null },
    { name: 'plain method', challenge: 'a'.repeat(43), method: 'plain' },
    { name: 'challenge without method', challenge: pkcePair().challenge, method: null },
  ];
  for (const c of cases) {
    const jar = new CookieJar();
    const res = await browse(jar, authorizeUrl(server.url, { clientId: client.client_id, challenge: c.challenge, method: c.method }));
    const { continueTo } = await refusalPage(res);
    assert.ok(continueTo !== undefined, c.name);
    assert.ok(continueTo.href.startsWith(REDIRECT_URI), c.name);
    assert.equal(continueTo.searchParams.get('error'), 'invalid_request', c.name);
    assert.equal(continueTo.searchParams.get('code'), null, c.name);
  }

  const jar = new CookieJar();
  const { challenge } = pkcePair();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge });
  const callback = await submitAndFollow(jar, server.url, url, 'signup', {
    email: 'fay@example.org',
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const wrong = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: pkcePair().verifier,
    client_id: client.client_id,
  });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'invalid_grant');
});

test('log-in: wrong password or unknown e-mail re-renders the page (200, message, no redirect); the right one works', async (t) => {
  const { server } = await startFixture(t);
  const { tokens: first } = await fullFlow(server.url, { email: 'gus@example.org', password: PASSWORD, mode: 'signup' });
  const userId = jwtPart(first.access_token ?? '', 1).sub;

  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge });
  for (const form of [
    { email: 'gus@example.org', password: 'not the password' },
    { email: 'nobody@example.org', password: PASSWORD },
  ]) {
    const res = await browse(jar, `${url}/login`, { form });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('location'), null);
    const html = await res.text();
    assert.match(html, /role="alert"[^>]*>Wrong e-mail address or password\./);
    assert.match(html, new RegExp(`value="${form.email.replace('.', '\\.')}"`), 'the address is kept');
    assert.doesNotMatch(html, /not the password|at .*\.ts:\d+/, 'no password echo, no stack');
  }
  // Same interaction, right password, different letter case in the address.
  const callback = await submitAndFollow(jar, server.url, url, 'login', { email: 'GUS@example.org', password: PASSWORD });
  const { body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  assert.equal(jwtPart(body.access_token ?? '', 1).sub, userId);
});

test('sign-up refusals: short password, mismatch, invalid or existing e-mail — all shown on the page', async (t) => {
  const { server, store } = await startFixture(t);
  await fullFlow(server.url, { email: 'hal@example.org', password: PASSWORD, mode: 'signup' });
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ email: 'ivy@example.org', password: 'short', confirm: 'short' }, /at least 8 characters/],
    [{ email: 'ivy@example.org', password: PASSWORD, confirm: `${PASSWORD}!` }, /do not match/],
    [{ email: 'not-an-address', password: PASSWORD, confirm: PASSWORD }, /valid e-mail address/],
    [{ email: 'HAL@example.org', password: PASSWORD, confirm: PASSWORD }, /already exists/],
  ];
  for (const [form, message] of cases) {
    const res = await browse(jar, `${url}/signup`, { form });
    assert.equal(res.status, 200, JSON.stringify(form));
    assert.match(await res.text(), message);
  }
  assert.equal(store.listUsers().length, 1, 'no account was created by a refused sign-up');
});

test('the sign-up allowance of the server holds for every address together; 0 turns it off', async (t) => {
  const { server, store } = await startFixture(t, { signupsPerHour: 2 });
  const client = await registerClient(server.url);
  const signUp = async (email: string): Promise<Response> => {
    const jar = new CookieJar();
    const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
    return browse(jar, `${url}/signup`, { form: { email, password: PASSWORD, confirm: PASSWORD } });
  };
  assert.equal((await signUp('a1@example.org')).status, 303);
  assert.equal((await signUp('a2@example.org')).status, 303);
  const refused = await signUp('a3@example.org');
  assert.equal(refused.status, 429);
  assert.match(await refused.text(), /not taking new accounts right now/);
  assert.equal(store.listUsers().length, 2, 'no account past the allowance');

  const open = await startFixture(t, { signupsPerHour: 0 });
  const openClient = await registerClient(open.server.url);
  for (let i = 0; i < 3; i++) {
    const jar = new CookieJar();
    const { url } = await openInteraction(jar, open.server.url, { clientId: openClient.client_id, challenge: pkcePair().challenge });
    const res = await browse(jar, `${url}/signup`, { form: { email: `b${i}@example.org`, password: PASSWORD, confirm: PASSWORD } });
    assert.equal(res.status, 303, `sign-up ${i + 1} without a server-wide limit`);
  }
});

test('a signed-in browser is not silently approved for a new client: it gets an Allow button', async (t) => {
  const { server } = await startFixture(t);
  const { jar, tokens } = await fullFlow(server.url, { email: 'kim@example.org', password: PASSWORD, mode: 'signup' });
  const userId = jwtPart(tokens.access_token ?? '', 1).sub;

  const other = await registerClient(server.url, { client_name: 'Another <b>App</b>' });
  const { verifier, challenge } = pkcePair();
  const { url, html } = await openInteraction(jar, server.url, { clientId: other.client_id, challenge });
  assert.match(html, /Continue as kim@example\.org/);
  assert.match(html, /Another &#60;b&#62;App&#60;\/b&#62;/, 'client names are escaped');
  assert.match(html, />Allow</);
  const callback = await submitAndFollow(jar, server.url, url, 'confirm');
  const { body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: other.client_id,
  });
  assert.equal(jwtPart(body.access_token ?? '', 1).sub, userId);

  // Once approved, the same client goes straight through for what it was granted…
  const again = await browse(
    jar,
    authorizeUrl(server.url, { clientId: other.client_id, challenge: pkcePair().challenge, scope: 'openid' }),
  );
  const out = await followToCallback(jar, again, server.url);
  assert.ok(out instanceof URL);
  assert.ok(out.searchParams.get('code') !== null);
  // …but a new refresh token (offline_access) always takes a click: consent is prompted (OIDC rule).
  const offline = await openInteraction(jar, server.url, { clientId: other.client_id, challenge: pkcePair().challenge });
  assert.match(offline.html, /Continue as kim@example\.org/);
});

test("a signed-in browser can switch accounts from the consent page (through the provider's logout step)", async (t) => {
  const { server } = await startFixture(t);
  const b = await fullFlow(server.url, { email: 'bea@example.org', password: PASSWORD, mode: 'signup' });
  const bId = jwtPart(b.tokens.access_token ?? '', 1).sub;
  const { jar } = await fullFlow(server.url, { email: 'al@example.org', password: PASSWORD, mode: 'signup' });
  const other = await registerClient(server.url);
  const { verifier, challenge } = pkcePair();
  const { url, html } = await openInteraction(jar, server.url, { clientId: other.client_id, challenge });
  assert.match(html, /Continue as al@example\.org/);
  const login = await browse(jar, `${url}/login`, { form: { email: 'bea@example.org', password: PASSWORD } });
  // The provider ends the old session first with an auto-submitting form (a click without script).
  const logoutPage = await browse(jar, location(login, server.url));
  assert.equal(logoutPage.status, 200);
  const page = await logoutPage.text();
  const action = /action="([^"]+)"/.exec(page)?.[1] ?? '';
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const confirm = await browse(jar, action, { form: { xsrf, logout: 'yes' } });
  const callback = await followToCallback(jar, confirm, server.url);
  assert.ok(callback instanceof URL);
  const { body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: other.client_id,
  });
  assert.equal(jwtPart(body.access_token ?? '', 1).sub, bId);
});

test('offline_access without prompt=consent still yields a refresh token (the server adds the prompt); prompt=none does not', async (t) => {
  const { server } = await startFixture(t);
  const { jar, client } = await fullFlow(server.url, { email: 'lou@example.org', password: PASSWORD, mode: 'signup' });
  // Explicit prompt=login: consent is added, the login page appears, the refresh token comes.
  const { verifier, challenge } = pkcePair();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge, extra: { prompt: 'login' } });
  const callback = await submitAndFollow(jar, server.url, url, 'login', { email: 'lou@example.org', password: PASSWORD });
  const { body } = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  assert.equal(typeof body.refresh_token, 'string');
  // prompt=none from the signed-in browser: no page, a code, but offline_access is dropped.
  const silent = pkcePair();
  const res = await browse(
    jar,
    authorizeUrl(server.url, { clientId: client.client_id, challenge: silent.challenge, extra: { prompt: 'none' } }),
  );
  const out = await followToCallback(jar, res, server.url);
  assert.ok(out instanceof URL);
  const code = out.searchParams.get('code');
  assert.ok(code !== null, out.href);
  const tokens = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: silent.verifier,
    client_id: client.client_id,
  });
  assert.equal(tokens.body.refresh_token, undefined);
  assert.equal(jwtPart(tokens.body.access_token ?? '', 1).scope, 'openid');
});

test('cancel returns access_denied to the client', async (t) => {
  const { server } = await startFixture(t);
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge, state: 's1' });
  const callback = await submitAndFollow(jar, server.url, url, 'abort');
  assert.equal(callback.searchParams.get('error'), 'access_denied');
  assert.equal(callback.searchParams.get('state'), 's1');
});

test('errors are readable HTML pages, never stacks: unknown client, stale interaction, wrong method', async (t) => {
  const { server } = await startFixture(t);
  const unknown = await browse(new CookieJar(), authorizeUrl(server.url, { clientId: 'no-such-client', challenge: pkcePair().challenge }));
  assert.equal(unknown.status, 400);
  assert.match(unknown.headers.get('content-type') ?? '', /^text\/html/);
  const html = await unknown.text();
  assert.match(html, /Unknown application/);
  assert.match(html, /invalid_client/);
  assert.doesNotMatch(html, /node_modules|\.js:\d+|fonts\.googleapis/);

  // A form posted without the interaction cookie (another browser, or a cross-site POST).
  const stale = await browse(new CookieJar(), `${server.url}/interaction/abcdef/login`, {
    form: { email: 'x@example.org', password: PASSWORD },
  });
  assert.equal(stale.status, 400);
  assert.match(await stale.text(), /This sign-in page has expired/);

  const get = await browse(new CookieJar(), `${server.url}/interaction/abcdef/login`);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  await get.arrayBuffer();

  // The page of another interaction than the one this browser's cookie names.
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  const foreign = await browse(jar, `${server.url}/interaction/someoneElsesUid`);
  assert.equal(foreign.status, 400);
  await foreign.arrayBuffer();
});

test('restart on the same state directory: same signing key, registered clients and refresh tokens survive', async (t) => {
  const fx = await startFixture(t);
  const { client, tokens } = await fullFlow(fx.server.url, { email: 'lee@example.org', password: PASSWORD, mode: 'signup' });
  const kidBefore = jwtPart(tokens.access_token ?? '', 0).kid;
  const port = fx.server.port;
  await fx.server.close();
  // Let this process's fetch notice that its pooled keep-alive sockets were closed by the old server;
  // otherwise it may reuse one for the same origin and read "other side closed".
  await new Promise((resolve) => setTimeout(resolve, 100));

  const server = await fx.restart({ port });
  assert.equal(server.url, fx.server.url, 'same port, same issuer');
  const jwks = (await (await fetch(`${server.url}/jwks`)).json()) as { keys: Array<{ kid: string }> };
  assert.deepEqual(
    jwks.keys.map((k) => k.kid),
    [kidBefore],
  );

  // A token minted before the restart still verifies against the new process's JWKS.
  await jwtVerify(tokens.access_token ?? '', createRemoteJWKSet(new URL(`${server.url}/jwks`)), {
    issuer: server.url,
    audience: MCP_RESOURCE,
    typ: 'at+jwt',
    algorithms: ['RS256'],
  });

  const r = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(jwtPart(r.body.access_token ?? '', 0).kid, kidBefore);

  // The client registered before the restart can start a new authorization.
  const res = await browse(new CookieJar(), authorizeUrl(server.url, { clientId: client.client_id, challenge: pkcePair().challenge }));
  assert.equal(res.status, 303);
  assert.match(location(res, server.url), /\/interaction\//);
});

test('refresh tokens expire after 30 days (stored-record expiry on the injected clock)', async (t) => {
  let now = Date.now();
  const { server } = await startFixture(t, { clock: () => now });
  const { client, tokens } = await fullFlow(server.url, { email: 'max@example.org', password: PASSWORD, mode: 'signup' });
  now += 29 * 86_400_000;
  const ok = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(ok.status, 200);
  // The rotated token got its own 30 days from its issue (at the moved clock).
  now += 31 * 86_400_000;
  const late = await tokenRequest(server.url, {
    grant_type: 'refresh_token',
    refresh_token: ok.body.refresh_token ?? '',
    client_id: client.client_id,
  });
  assert.equal(late.status, 400);
  assert.equal(late.body.error, 'invalid_grant');
});

test('state files: scrypt hash format, no plaintext password anywhere, secrets file owner-only', async (t) => {
  const fx = await startFixture(t);
  const secret = 'Plaintext-Never-Stored-42';
  await fullFlow(fx.server.url, { email: 'ned@example.org', password: secret, mode: 'signup' });
  const user = fx.store.listUsers()[0];
  assert.match(user.password_hash ?? '', /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
  await fx.server.close();

  const needles = [Buffer.from(secret, 'utf8'), Buffer.from(secret, 'utf16le')];
  const files = readdirSync(fx.dir).map((name) => join(fx.dir, name));
  assert.ok(files.some((f) => f.endsWith(OAUTH_FILE)));
  assert.ok(files.some((f) => f.endsWith(SECRETS_FILE)));
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const needle of needles) assert.equal(bytes.indexOf(needle), -1, `${file} contains the password`);
  }
  assert.equal(statSync(join(fx.dir, SECRETS_FILE)).mode & 0o777, 0o600);
  assert.equal(statSync(join(fx.dir, OAUTH_FILE)).mode & 0o777, 0o600);
});
