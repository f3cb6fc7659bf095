/**
 * The sign-in page in a real browser (Debian's Chromium driven by playwright-core): what a person sees
 * when an MCP client opens the authorization URL. Sign-up through the real form, the redirect back to
 * the client with a code, the code exchanged for an RS256 access token that the MCP server accepts; then,
 * in the same browser, a second authorization by logging in, and a third approved with one "Allow" click
 * on the consent page of the remembered session.
 *
 * Needs /usr/bin/chromium (`npm test` installs it: bin/test-prerequisites.js). Without it the test fails rather than skips, so a
 * missing browser cannot pass unnoticed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwtPart, freePorts, startTestServices } from '../helpers/services.ts';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'correct horse battery staple';
const SCOPE = 'openid profile email offline_access';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface AsMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
}

interface Tokens {
  access_token?: string;
  refresh_token?: string;
  token_type?: string;
  error?: string;
  error_description?: string;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

test('a person signs up and logs in on the authorization page in Chromium; the codes exchange for RS256 access tokens the MCP server accepts', {
  timeout: 90_000,
}, async (t) => {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: this test needs Debian's chromium (npm test installs it when run as root; otherwise: apt-get install chromium)`,
  );

  // One cleanup stack, run last-in first-out: the browser closes before the servers, the servers before
  // their directory goes.
  const cleanups: Array<() => unknown> = [];
  t.after(async () => {
    for (let fn = cleanups.pop(); fn !== undefined; fn = cleanups.pop()) await fn();
  });
  const shots = mkdtempSync(join(tmpdir(), 'hpd-browser-'));
  cleanups.push(() => rmSync(shots, { recursive: true, force: true }));

  const svc = await startTestServices();
  cleanups.push(() => svc.close());
  const [callbackPort] = (await freePorts(1)) as [number];
  // Nothing listens here (see below).
  const redirectUri = `http://127.0.0.1:${callbackPort}/callback`;

  const metadata = (await (await fetch(`${svc.authUrl}/.well-known/oauth-authorization-server`)).json()) as AsMetadata;
  assert.equal(metadata.issuer, svc.authUrl);

  const reg = await fetch(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Browser Test Client',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  assert.equal(reg.status, 201, await reg.clone().text());
  const clientId = ((await reg.json()) as { client_id: string }).client_id;

  const authorize = (challenge: string, state: string): string => {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: SCOPE,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: svc.mcpUrl,
    });
    return `${metadata.authorization_endpoint}?${q.toString()}`;
  };

  const exchange = async (code: string, verifier: string): Promise<Tokens> => {
    const res = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: clientId,
        resource: svc.mcpUrl,
      }).toString(),
    });
    const body = (await res.json()) as Tokens;
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  };

  const assertAccessToken = (tokens: Tokens): Record<string, unknown> => {
    const access = tokens.access_token ?? '';
    assert.equal(access.split('.').length, 3, 'a JWT access token');
    const header = decodeJwtPart(access, 0);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.typ, 'at+jwt');
    const payload = decodeJwtPart(access, 1);
    assert.equal(payload.aud, svc.mcpUrl);
    assert.equal(payload.iss, svc.authUrl);
    assert.equal(payload.client_id, clientId);
    assert.equal(typeof tokens.refresh_token, 'string', 'offline_access gives a refresh token');
    return payload;
  };

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  cleanups.push(() => browser.close());
  const context = await browser.newContext();

  // The client's redirect URI: nothing listens there (a desktop client would run a loopback listener).
  // Playwright's routes see only the first URL of a redirect chain and the redirect URI is reached by
  // the authorization server's redirect, so the test waits for the browser's request to it instead.
  // Each authorization gets its own tab, as MCP clients open one per sign-in, so the refused navigation
  // of one cannot interrupt the next.
  const openAuthorization = async (challenge: string, state: string): Promise<Page> => {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.setDefaultNavigationTimeout(15_000);
    await page.goto(authorize(challenge, state));
    assert.match(new URL(page.url()).pathname, /^\/interaction\/[A-Za-z0-9_-]+$/, 'the browser was sent to the interaction page');
    return page;
  };

  /** Submits with `click`, waits until the browser requests the redirect URI, closes the tab; returns the code. */
  const submitTo = async (page: Page, click: () => Promise<void>, state: string): Promise<string> => {
    const callbacks: string[] = [];
    page.on('request', (req) => {
      if (req.url().startsWith(redirectUri)) callbacks.push(req.url());
    });
    const [request] = await Promise.all([page.waitForRequest((req) => req.url().startsWith(redirectUri)), click()]);
    await request.response(); // settles (null: connection refused) before the tab goes
    await page.close();
    assert.equal(request.method(), 'GET');
    assert.ok(request.isNavigationRequest(), 'the browser navigates to the redirect URI');
    assert.deepEqual(callbacks, [request.url()], 'one request reached the redirect URI');
    const landed = new URL(request.url());
    assert.equal(landed.searchParams.get('error'), null, landed.href);
    assert.equal(landed.searchParams.get('state'), state);
    assert.equal(landed.searchParams.get('iss'), svc.authUrl, 'RFC 9207 iss on the redirect');
    const code = landed.searchParams.get('code');
    assert.ok(code !== null && code !== '', `a code in ${landed.href}`);
    return code;
  };

  const email = `browser-${randomBytes(4).toString('hex')}@example.org`;
  const section = (page: Page, heading: string) =>
    page.locator('section', { has: page.getByRole('heading', { name: heading, exact: true }) });

  // 1. Sign-up.
  const first = pkce();
  const page = await openAuthorization(first.challenge, 'state-signup');
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to Health Plan Data');
  assert.match(
    (await page.locator('p.client').textContent()) ?? '',
    /Browser Test Client.*127\.0\.0\.1:\d+/s,
    'names the client and where it returns',
  );
  const shot = join(shots, 'signup.png');
  await page.screenshot({ path: shot, fullPage: true });
  const png = readFileSync(shot);
  assert.ok(statSync(shot).size > 1000, 'a non-trivial screenshot');
  assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE, 'the screenshot is a PNG');

  const signup = section(page, 'Create an account');
  await signup.getByLabel('E-mail').fill(email);
  await signup.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await signup.getByLabel('Confirm password').fill(PASSWORD);
  const firstCode = await submitTo(page, () => signup.getByRole('button', { name: 'Create account' }).click(), 'state-signup');
  const firstTokens = await exchange(firstCode, first.verifier);
  const firstPayload = assertAccessToken(firstTokens);
  const user = svc.services.store.getUser(String(firstPayload.sub));
  assert.equal(user?.email, email, 'sub is the account just created');

  // The token works at the MCP server.
  const mcp = new Client({ name: 'hpd-browser-test', version: '1.0.0' });
  cleanups.push(() => mcp.close());
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${firstTokens.access_token}` } },
    }),
  );
  const years = (await mcp.callTool({ name: 'list_plan_years', arguments: {} })) as {
    isError?: boolean;
    structuredContent?: { available_years?: number[] };
  };
  assert.notEqual(years.isError, true);
  assert.deepEqual(years.structuredContent?.available_years, [2025]);

  // 2. Same browser, a second authorization: the session is remembered, so the page offers "Allow" for
  // the signed-in account and still has the log-in form; log in with the same credentials.
  const second = pkce();
  const page2 = await openAuthorization(second.challenge, 'state-login'); // no silent approval
  assert.equal(
    await page2.getByRole('heading', { level: 2, name: `Continue as ${email}` }).count(),
    1,
    'the consent section names the signed-in account',
  );
  const login = section(page2, 'Log in');
  await login.getByLabel('E-mail').fill(email);
  await login.getByLabel('Password').fill(PASSWORD);
  const secondCode = await submitTo(page2, () => login.getByRole('button', { name: 'Log in' }).click(), 'state-login');
  assert.notEqual(secondCode, firstCode);
  const secondPayload = assertAccessToken(await exchange(secondCode, second.verifier));
  assert.equal(secondPayload.sub, firstPayload.sub, 'the same account');

  // 3. And once more, approved with the consent button alone.
  const third = pkce();
  const page3 = await openAuthorization(third.challenge, 'state-allow');
  const thirdCode = await submitTo(page3, () => page3.getByRole('button', { name: 'Allow' }).click(), 'state-allow');
  const thirdPayload = assertAccessToken(await exchange(thirdCode, third.verifier));
  assert.equal(thirdPayload.sub, firstPayload.sub);

  assert.equal(svc.services.store.listUsers().filter((u) => u.email === email).length, 1, 'one account for the e-mail');
});
