/**
 * The authorization server as an open redirector, closed (RFC 9700 §2.1, §4.11.2): registration takes
 * https and loopback http redirect URIs only, and an erroneous authorization request of a dynamically
 * registered client shows a page instead of forwarding the browser to the client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redirectUriProblem } from '../../src/auth-server/redirect-uris.ts';
import {
  authorizeUrl,
  browse,
  CookieJar,
  location,
  pkcePair,
  REDIRECT_URI,
  refusalPage,
  registerClient,
  startFixture,
} from './oauth-test-client.ts';

const EVIL = 'https://evil.example/landing';

async function register(issuer: string, metadata: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Probe',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('registration: plain http off loopback, script/data schemes, fragments, user info and wildcards are invalid_redirect_uri', async (t) => {
  const { server } = await startFixture(t);
  const refused: Array<[string, string?]> = [
    ['http://evil.example/landing'],
    ['http://127.0.0.1.evil.example/cb'],
    ['http://192.168.1.10/cb'],
    ['javascript:alert(document.domain)//'],
    ['data:text/html,<script>alert(1)</script>'],
    ['https://evil.example/landing#frag'],
    ['https://user:pw@evil.example/landing'],
    ['https://*.evil.example/landing'],
    ['com.example.app:/callback'], // private-use schemes are for native clients only
    ['myapp:/callback', 'native'], // not a reverse domain name (RFC 8252 §7.1)
    ['javascript:alert(1)//', 'native'],
    ['http://evil.example/landing', 'native'],
  ];
  for (const [uri, applicationType] of refused) {
    const { status, body } = await register(server.url, {
      redirect_uris: [REDIRECT_URI, uri],
      ...(applicationType === undefined ? {} : { application_type: applicationType }),
    });
    assert.equal(status, 400, uri);
    assert.equal(body.error, 'invalid_redirect_uri', uri);
    assert.match(String(body.error_description), /^redirect_uris /, uri);
  }
  const accepted: Array<[string, string?]> = [
    [EVIL], // https anywhere: the client's own origin, protected in transit
    ['http://127.0.0.1:53682/callback'],
    ['http://localhost:6274/oauth/callback'],
    ['http://[::1]:8000/cb'],
    ['com.example.app:/oauth2redirect', 'native'],
    ['http://127.0.0.1/cb', 'native'],
  ];
  for (const [uri, applicationType] of accepted) {
    const { status, body } = await register(server.url, {
      redirect_uris: [uri],
      ...(applicationType === undefined ? {} : { application_type: applicationType }),
    });
    assert.equal(status, 201, `${uri}: ${JSON.stringify(body)}`);
    assert.deepEqual(body.redirect_uris, [uri]);
  }
});

test('registration: what is not one unambiguous RFC 3986 URI is refused, though a URL parser would repair it', async (t) => {
  const { server } = await startFixture(t);
  const refused: Array<[string, RegExp]> = [
    ['http://localhost\n/cb', /no spaces, control or non-ASCII/], // the parser drops the newline: loopback by accident
    ['http://127.0.0.1:5/c b', /no spaces/],
    ['https://exämple.example/cb', /xn-- form/],
    ['https://app.example/\u2028', /non-ASCII/],
    ['https:evil.example', /https:\/\/ before the host/],
    ['http:localhost/cb', /http:\/\/ before the host/],
  ];
  for (const [uri, reason] of refused) {
    const { status, body } = await register(server.url, { redirect_uris: [uri] });
    assert.equal(status, 400, JSON.stringify(uri));
    assert.equal(body.error, 'invalid_redirect_uri', JSON.stringify(uri));
    assert.match(String(body.error_description), reason, JSON.stringify(uri));
  }
  for (const uri of ['https://xn--exmple-cua.example/cb', 'https://app.example/caf%C3%A9', 'HTTPS://app.example/cb']) {
    const { status, body } = await register(server.url, { redirect_uris: [uri] });
    assert.equal(status, 201, `${uri}: ${JSON.stringify(body)}`);
    assert.deepEqual(body.redirect_uris, [uri], 'stored as sent');
  }
});

test('authorization: the redirect_uri must repeat a registered one byte for byte; only a native client’s loopback port may vary', async (t) => {
  const { server } = await startFixture(t);
  const web = await registerClient(server.url, { redirect_uris: ['https://good.example/cb', 'http://127.0.0.1:53682/callback'] });
  const native = await registerClient(server.url, {
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1:53682/callback', 'http://[::1]/cb'],
  });
  const outcome = async (clientId: string, redirectUri: string): Promise<'interaction' | 'refused'> => {
    const url = new URL(authorizeUrl(server.url, { clientId, challenge: pkcePair().challenge }));
    url.searchParams.set('redirect_uri', redirectUri);
    const res = await browse(new CookieJar(), url.href);
    if (res.status === 303 && new URL(location(res, server.url)).pathname.startsWith('/interaction/')) return 'interaction';
    assert.equal(res.status, 400, `${redirectUri}: ${res.status}`);
    assert.equal(res.headers.get('location'), null, `${redirectUri}: no redirect anywhere`);
    assert.match(await res.text(), /Unknown application/, redirectUri);
    return 'refused';
  };
  const webCases: Array<[string, 'interaction' | 'refused']> = [
    ['https://good.example/cb', 'interaction'],
    ['https://GOOD.example/cb', 'refused'],
    ['https://good.example/CB', 'refused'],
    ['https://good.example/cb/', 'refused'],
    ['https://good.example:443/cb', 'refused'],
    ['https://good.example/%63b', 'refused'],
    ['https://good.example/cb/../evil', 'refused'],
    ['https://good.example/evil/../cb', 'refused'],
    ['https://good.example/cb#x', 'refused'],
    ['https://good.example/cb?x=1', 'refused'],
    ['https://good@good.example/cb', 'refused'],
    ['https://good.example@evil.example/cb', 'refused'],
    ['http://good.example/cb', 'refused'],
    ['https://good.example/cb ', 'refused'],
    ['http://127.0.0.1:53682/callback', 'interaction'],
    // A web client's loopback URI is matched exactly, port included (the provider's rule; RFC 8252 §7.3 is about native apps).
    ['http://127.0.0.1:53683/callback', 'refused'],
    ['http://localhost:53682/callback', 'refused'],
  ];
  for (const [uri, expected] of webCases) assert.equal(await outcome(web.client_id, uri), expected, `web client, ${uri}`);
  const nativeCases: Array<[string, 'interaction' | 'refused']> = [
    ['http://127.0.0.1:53682/callback', 'interaction'],
    ['http://127.0.0.1:1234/callback', 'interaction'],
    ['http://127.0.0.1/callback', 'interaction'],
    ['http://[::1]:8000/cb', 'interaction'],
    ['http://localhost:53682/callback', 'refused'],
    ['http://127.0.0.1:1234/callback/', 'refused'],
    ['http://127.0.0.1:1234/Callback', 'refused'],
    ['https://127.0.0.1:53682/callback', 'refused'],
    ['http://127.0.0.1:53682@evil.example/callback', 'refused'],
    ['http://evil.example:53682/callback', 'refused'],
  ];
  for (const [uri, expected] of nativeCases) assert.equal(await outcome(native.client_id, uri), expected, `native client, ${uri}`);
});

test('redirectUriProblem: the rules one by one', () => {
  assert.equal(redirectUriProblem('https://app.example/cb', 'web'), undefined);
  assert.equal(redirectUriProblem('http://LOCALHOST:1/cb', 'web'), undefined);
  assert.match(redirectUriProblem('http://app.example/cb', 'web') ?? '', /loopback/);
  assert.match(redirectUriProblem('not a url', 'web') ?? '', /valid uris/);
  assert.match(redirectUriProblem('vbscript:x', 'native') ?? '', /vbscript/);
  assert.match(redirectUriProblem('file:///etc/passwd', 'native') ?? '', /file/);
  assert.equal(redirectUriProblem('org.example.app-1:/cb', 'native'), undefined);
});

test('an erroneous /auth for a dynamically registered client shows a page: no redirect to its origin without a click', async (t) => {
  const { server } = await startFixture(t);
  const evil = await registerClient(server.url, { client_name: 'Totally Legit', redirect_uris: [EVIL] });
  const base = (extra: Record<string, string>, p: { challenge?: string | null; resource?: string | null } = {}): string => {
    const url = new URL(
      authorizeUrl(server.url, {
        clientId: evil.client_id,
        challenge: p.challenge === undefined ? pkcePair().challenge : p.challenge,
        resource: p.resource,
        state: 'st-9',
        extra,
      }),
    );
    url.searchParams.set('redirect_uri', EVIL);
    return url.href;
  };
  const cases: Array<[string, string, string]> = [
    ['missing PKCE', base({}, { challenge: null }), 'invalid_request'],
    ['unsupported response_type', base({ response_type: 'token' }), 'unsupported_response_type'],
    ['foreign resource', base({}, { resource: 'https://elsewhere.example' }), 'invalid_target'],
    ['silent check without a session', base({ prompt: 'none' }), 'login_required'],
  ];
  for (const [name, url, error] of cases) {
    const res = await browse(new CookieJar(), url);
    assert.equal(res.status, 400, name);
    assert.equal(res.headers.get('location'), null, `${name}: no redirect at all`);
    const { html, continueTo } = await refusalPage(res);
    assert.match(html, /Totally Legit/, name);
    assert.match(html, /at <strong>https:\/\/evil\.example<\/strong>/, `${name}: names the origin`);
    assert.match(html, new RegExp(`<code>${error}</code>`), name);
    assert.doesNotMatch(html, /<script|http-equiv="refresh"/i, `${name}: nothing leaves without a click`);
    // The click delivers the error the client is owed.
    assert.ok(continueTo !== undefined, name);
    assert.equal(continueTo.origin + continueTo.pathname, EVIL, name);
    assert.equal(continueTo.searchParams.get('error'), error, name);
    assert.equal(continueTo.searchParams.get('state'), 'st-9', name);
    assert.equal(continueTo.searchParams.get('iss'), server.url, name);
  }

  // response_mode=form_post: a form with a button, not the provider's self-submitting one.
  const post = await browse(new CookieJar(), base({ response_mode: 'form_post' }, { challenge: null }));
  assert.equal(post.status, 400);
  const html = await post.text();
  assert.match(html, /<form method="post" action="https:\/\/evil\.example\/landing">/);
  assert.match(html, /name="error" value="invalid_request"/);
  assert.match(html, /<button type="submit" id="continue">Continue to https:\/\/evil\.example<\/button>/);
  assert.doesNotMatch(html, /<script/);

  // A redirect_uri it never registered gets the plain error page and no way there at all.
  const unregistered = new URL(base({}, { challenge: null }));
  unregistered.searchParams.set('redirect_uri', 'https://other.example/cb');
  const res = await browse(new CookieJar(), unregistered.href);
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('location'), null);
  const page = await res.text();
  assert.match(page, /Unknown application/);
  assert.doesNotMatch(page, /other\.example|evil\.example/);
});

test('a valid /auth from a fresh browser always stops at our log-in page first; operator-configured clients still get error redirects', async (t) => {
  const first = 'https://first-party.example/cb';
  const { server } = await startFixture(t, {
    clients: [
      {
        client_id: 'hpd-cli',
        redirect_uris: [first],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
  });
  const evil = await registerClient(server.url, { redirect_uris: [EVIL] });
  const ok = new URL(authorizeUrl(server.url, { clientId: evil.client_id, challenge: pkcePair().challenge }));
  ok.searchParams.set('redirect_uri', EVIL);
  const res = await browse(new CookieJar(), ok.href);
  assert.equal(res.status, 303);
  const next = new URL(location(res, server.url));
  assert.equal(next.origin, server.url, 'to our own page, never to the client');
  assert.match(next.pathname, /^\/interaction\//);

  const configured = new URL(authorizeUrl(server.url, { clientId: 'hpd-cli', challenge: null }));
  configured.searchParams.set('redirect_uri', first);
  const redirected = await browse(new CookieJar(), configured.href);
  assert.equal(redirected.status, 303);
  const back = new URL(location(redirected, server.url));
  assert.equal(back.origin + back.pathname, first);
  assert.equal(back.searchParams.get('error'), 'invalid_request');
});
