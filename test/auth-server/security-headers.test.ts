/**
 * What every answer of the authorization server tells the browser: no Referer (the redirect to the
 * client carries the code, the others an interaction id), no framing (clickjacking of the consent
 * page), no sniffing, and no caching of anything but the public metadata and keys. Walked through a
 * whole sign-up, a consent, an abort and the error answers. Behind TLS, no downgrade to http (HSTS).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizeUrl, browse, CookieJar, location, pkcePair, registerClient, startFixture } from './oauth-test-client.ts';

function assertGuarded(label: string, res: Response, cacheable = false): void {
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', `${label}: Referrer-Policy`);
  assert.equal(res.headers.get('x-frame-options'), 'DENY', `${label}: X-Frame-Options`);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, `${label}: frame-ancestors`);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${label}: nosniff`);
  if (!cacheable) assert.equal(res.headers.get('cache-control'), 'no-store', `${label}: Cache-Control`);
}

test('every answer, redirects and errors included, says Referrer-Policy: no-referrer and forbids framing; only the metadata and keys may be cached', async (t) => {
  const { server } = await startFixture(t);
  const seen: Array<[string, Response]> = [];
  const jar = new CookieJar();
  const step = async (label: string, url: string, form?: Record<string, string>): Promise<Response> => {
    const res = await browse(jar, url, form === undefined ? {} : { form });
    seen.push([label, res]);
    return res;
  };
  const client = await registerClient(server.url);
  const { challenge } = pkcePair();
  const toInteraction = await step('GET /auth', authorizeUrl(server.url, { clientId: client.client_id, challenge }));
  const interaction = location(toInteraction, server.url);
  await step('the log-in page', interaction);
  const password = 'correct horse battery';
  const toResume = await step('POST signup (redirect)', `${interaction}/signup`, { email: 'hd@example.org', password, confirm: password });
  assert.equal(toResume.status, 303);
  const toClient = await step('the redirect carrying the code', location(toResume, server.url));
  assert.match(location(toClient, server.url), /[?&]code=/);

  const other = await registerClient(server.url);
  const consent = location(
    await step('GET /auth, signed in, new client', authorizeUrl(server.url, { clientId: other.client_id, challenge })),
    server.url,
  );
  await step('the consent page', consent);
  const aborted = await step('POST abort (redirect)', `${consent}/abort`, {});
  await step('the redirect carrying access_denied', location(aborted, server.url));
  await step('a replayed form', `${consent}/confirm`, {});
  await step('an unknown client', `${server.url}/auth?client_id=nope&response_type=code`);
  await step('an unknown path', `${server.url}/nowhere`);
  await step('a refusal page', authorizeUrl(server.url, { clientId: client.client_id, challenge: null }));
  for (const [label, res] of seen) assertGuarded(`${label} (${res.status})`, res);

  const token = await fetch(`${server.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: client.client_id }).toString(),
  });
  assertGuarded('a token error', token);
  for (const path of ['/.well-known/oauth-authorization-server', '/jwks']) assertGuarded(path, await fetch(`${server.url}${path}`), true);
});

test('with an https issuer (behind a TLS-terminating proxy) every answer says Strict-Transport-Security; with http none does', async (t) => {
  const secure = await startFixture(t, { issuer: 'https://auth.example', trustProxy: true });
  const direct = `http://127.0.0.1:${secure.server.port}`;
  for (const path of ['/.well-known/oauth-authorization-server', '/auth?client_id=nope&response_type=code', '/nowhere']) {
    const res = await fetch(`${direct}${path}`, { headers: { 'x-forwarded-proto': 'https', host: 'auth.example' }, redirect: 'manual' });
    await res.arrayBuffer();
    assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000', path);
  }
  const plain = await startFixture(t);
  const res = await fetch(`${plain.server.url}/.well-known/oauth-authorization-server`);
  await res.arrayBuffer();
  assert.equal(res.headers.get('strict-transport-security'), null);
});
