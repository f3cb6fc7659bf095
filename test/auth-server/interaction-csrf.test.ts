/**
 * Forged posts of the log-in and consent forms. A form is accepted only with the signed interaction
 * cookie (SameSite=Lax, HttpOnly, scoped to the interaction's path, so a cross-site post arrives
 * without it) AND the same interaction id in the path (random, never in a Referer, so another origin
 * cannot name it): a post without the cookie, with another interaction's cookie, with a forged cookie
 * or after the interaction ended is refused, and the real browser's interaction still works after.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  authorizeUrl,
  browse,
  CookieJar,
  fullFlow,
  location,
  openInteraction,
  pkcePair,
  registerClient,
  startFixture,
  submitAndFollow,
} from './oauth-test-client.ts';

const PASSWORD = 'correct horse battery';

async function assertRefused(label: string, res: Response): Promise<void> {
  assert.equal(res.status, 400, label);
  assert.equal(res.headers.get('location'), null, `${label}: no redirect`);
  assert.match(await res.text(), /This sign-in page has expired/, label);
}

test('the interaction cookie is signed, HttpOnly, SameSite=Lax and scoped to its interaction', async (t) => {
  const { server } = await startFixture(t);
  const client = await registerClient(server.url);
  const res = await browse(new CookieJar(), authorizeUrl(server.url, { clientId: client.client_id, challenge: pkcePair().challenge }));
  const uid = new URL(location(res, server.url)).pathname.split('/')[2];
  const cookies = res.headers.getSetCookie();
  const value = cookies.find((c) => c.startsWith('_interaction='));
  assert.ok(value !== undefined, cookies.join('\n'));
  assert.match(value, new RegExp(`; path=/interaction/${uid};`));
  assert.match(value, /; samesite=lax/i);
  assert.match(value, /; httponly/i);
  assert.ok(
    cookies.some((c) => c.startsWith('_interaction.sig=')),
    'signed',
  );
});

test('forged log-in and consent posts are refused: no cookie, another interaction’s cookie, a forged cookie, a finished interaction', async (t) => {
  const { server } = await startFixture(t);
  const { jar: victim, client } = await fullFlow(server.url, { email: 'vic@example.org', password: PASSWORD, mode: 'signup' });
  await fullFlow(server.url, { email: 'eve@example.org', password: PASSWORD, mode: 'signup' });

  // The victim, signed in, opens a consent for a new client (say, through a link from the attacker).
  const other = await registerClient(server.url, { client_name: 'Other' });
  const consent = await openInteraction(victim, server.url, { clientId: other.client_id, challenge: pkcePair().challenge });
  assert.match(consent.html, /Allow/);

  // A cross-site post: SameSite=Lax keeps the cookie home.
  await assertRefused('confirm without the cookie', await browse(new CookieJar(), `${consent.url}/confirm`, { form: {} }));
  await assertRefused(
    'log-in as the attacker without the cookie',
    await browse(new CookieJar(), `${consent.url}/login`, { form: { email: 'eve@example.org', password: PASSWORD } }),
  );
  // The attacker's own interaction cookie, sent with the victim's interaction id (or the reverse).
  const attacker = new CookieJar();
  const own = await openInteraction(attacker, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  await assertRefused('another interaction’s cookie', await browse(attacker, `${consent.url}/confirm`, { form: {} }));
  await assertRefused(
    'another interaction’s id',
    await browse(victim, `${own.url}/login`, { form: { email: 'eve@example.org', password: PASSWORD } }),
  );
  // A cookie naming the victim's interaction without the server's signature.
  const uid = new URL(consent.url).pathname.split('/')[2];
  const forged = await fetch(`${consent.url}/confirm`, {
    method: 'POST',
    headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', cookie: `_interaction=${uid}` },
    body: '',
    redirect: 'manual',
  });
  await assertRefused('an unsigned cookie', forged);

  // The victim's own click still works, once; a replay of it is refused.
  const callback = await submitAndFollow(victim, server.url, consent.url, 'confirm');
  assert.ok(callback.searchParams.get('code') !== null);
  await assertRefused('a replay after the interaction ended', await browse(victim, `${consent.url}/confirm`, { form: {} }));
});
