/**
 * Log-in and sign-up throttling: the back-off figures of login-throttle.ts on an injected clock, its
 * memory bound, and the forms end to end (429 + Retry-After before any password is verified, parallel
 * guesses, another account from another address unaffected).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { addressKey, BackoffTable, LoginThrottle, POLICIES } from '../../src/auth-server/login-throttle.ts';
import {
  authorizeUrl,
  browse,
  CookieJar,
  fullFlow,
  location,
  openInteraction,
  pkcePair,
  REDIRECT_URI,
  registerClient,
  startFixture,
  submitAndFollow,
} from './oauth-test-client.ts';

const PASSWORD = 'correct horse battery';

test('back-off: 5 free failures, then 2^(n-5) s, capped at 5 min per account; failures forgotten after an hour', () => {
  let now = 1_000_000;
  const table = new BackoffTable(POLICIES.account, () => now);
  const fail = (): void => {
    assert.deepEqual(table.check('a'), { allowed: true });
    table.start('a');
    table.finish('a', 'failed');
  };
  for (let i = 0; i < 5; i += 1) fail();
  assert.deepEqual(table.check('a'), { allowed: false, retryAfterSeconds: 1 });
  const waits: number[] = [];
  for (let n = 5; n < 16; n += 1) {
    const decision = table.check('a');
    assert.equal(decision.allowed, false);
    const wait = decision.allowed ? 0 : decision.retryAfterSeconds;
    waits.push(wait);
    now += wait * 1000 - 1;
    assert.equal(table.check('a').allowed, false, 'not a millisecond early');
    now += 1;
    fail();
  }
  assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
  // Another key is not affected.
  assert.deepEqual(table.check('b'), { allowed: true });
  // An hour after the last failure the count starts again.
  now += 60 * 60 * 1000;
  for (let i = 0; i < 5; i += 1) fail();
  assert.equal(table.check('a').allowed, false);
  // A success clears the account at once.
  now += 60 * 60 * 1000;
  fail();
  table.start('a');
  table.finish('a', 'reset');
  assert.equal(table.size, 0);
});

test('in-flight attempts count: of 300 simultaneous reservations for one account only 5 are granted', () => {
  let now = 0;
  const throttle = new LoginThrottle(() => now);
  const granted = [];
  for (let i = 0; i < 300; i += 1) {
    const r = throttle.login('victim@example.org', `10.0.${i % 250}.1`);
    if (r.allowed) granted.push(r.attempt);
  }
  assert.equal(granted.length, 5);
  for (const a of granted) a.failed();
  assert.equal(throttle.login('victim@example.org', '10.9.9.9').allowed, false);
  now += 1000;
  // Back-off reached: one attempt at a time.
  const one = throttle.login('victim@example.org', '10.9.9.9');
  assert.equal(one.allowed, true);
  assert.equal(throttle.login('victim@example.org', '10.9.9.9').allowed, false);
  if (one.allowed) one.attempt.succeeded();
  // A settled attempt ignores further calls (a finally after a success releases nothing twice).
  if (one.allowed) one.attempt.failed();
  assert.equal(throttle.login('victim@example.org', '10.9.9.9').allowed, true);
});

test('per address: 10 free failures across accounts, then back-off capped at 15 min; a success does not clear it', () => {
  let now = 0;
  const throttle = new LoginThrottle(() => now);
  for (let i = 0; i < 10; i += 1) {
    const r = throttle.login(`user${i}@example.org`, '192.0.2.7');
    assert.ok(r.allowed, `attempt ${i}`);
    r.attempt.failed();
  }
  const blocked = throttle.login('someone-else@example.org', '192.0.2.7');
  assert.deepEqual(blocked, { allowed: false, retryAfterSeconds: 1 });
  // Another address is not affected.
  assert.equal(throttle.login('someone-else@example.org', '198.51.100.1').allowed, true);
  now += 1000;
  const r = throttle.login('mine@example.org', '192.0.2.7');
  assert.ok(r.allowed);
  r.attempt.succeeded();
  // The address keeps its count: its next failure doubles the wait instead of starting afresh.
  const after = throttle.login('other@example.org', '192.0.2.7');
  assert.ok(after.allowed);
  after.attempt.failed();
  assert.deepEqual(throttle.login('third@example.org', '192.0.2.7'), { allowed: false, retryAfterSeconds: 2 });
  for (let n = 0; n < 30; n += 1) {
    now += 20 * 60 * 1000;
    const x = throttle.login(`x${n}@example.org`, '192.0.2.7');
    assert.ok(x.allowed);
    x.attempt.failed();
    const next = throttle.login(`y${n}@example.org`, '192.0.2.7');
    assert.ok(!next.allowed && next.retryAfterSeconds <= 15 * 60);
  }
  const last = throttle.login('z@example.org', '192.0.2.7');
  assert.deepEqual(last, { allowed: false, retryAfterSeconds: 15 * 60 });
});

test('sign-ups: every attempt counts per address, 10 free', () => {
  const throttle = new LoginThrottle(() => 0);
  for (let i = 0; i < 10; i += 1) {
    const r = throttle.signup('203.0.113.5');
    assert.ok(r.allowed);
    if (i % 2 === 0) r.attempt.succeeded();
    else r.attempt.failed();
  }
  assert.equal(throttle.signup('203.0.113.5').allowed, false);
  assert.equal(throttle.signup('203.0.113.6').allowed, true);
});

test('memory is bounded: rotating e-mails and addresses cannot grow the tables past the cap', () => {
  let now = 0;
  const throttle = new LoginThrottle(() => now, 1000);
  for (let i = 0; i < 20_000; i += 1) {
    now += 1;
    const r = throttle.login(`rotating-${i}@example.org`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    if (r.allowed) r.attempt.failed();
    const s = throttle.signup(`2001:db8:${i.toString(16)}::1`);
    if (s.allowed) s.attempt.failed();
  }
  const sizes = throttle.sizes();
  assert.ok(sizes.account <= 1000 && sizes.address <= 1000 && sizes.signup <= 1000, JSON.stringify(sizes));
  // The most recent keys survive eviction; the oldest went first.
  assert.equal(throttle.login('rotating-19999@example.org', '10.0.78.31').allowed, true);
  // Expired entries go before live ones: a live block survives a flood of keys that have expired.
  const table = new BackoffTable(POLICIES.account, () => now, 10);
  for (let i = 0; i < 5; i += 1) {
    table.start('victim');
    table.finish('victim', 'failed');
  }
  now += 1;
  for (let i = 0; i < 9; i += 1) {
    table.start(`old${i}`);
    table.finish(`old${i}`, 'released');
  }
  table.start('new');
  table.finish('new', 'released');
  assert.equal(table.size, 2, 'idle keys were dropped, not the victim');
  assert.equal(table.check('victim').allowed, false);
});

test('address keys: IPv4-mapped IPv6 as IPv4, IPv6 by /64', () => {
  assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
  assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:0db8:0001:0002:ffff:1:2:3'), '2001:db8:1:2::/64');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
  assert.equal(addressKey(undefined), 'unknown');
});

/** A browser on another client address: node:http bound to `localAddress`, answers as fetch Responses. */
function browseFrom(localAddress: string) {
  return (jar: CookieJar, url: string, form?: Record<string, string>): Promise<Response> =>
    new Promise((resolve, reject) => {
      const body = form === undefined ? undefined : new URLSearchParams(form).toString();
      const headers: Record<string, string> = { accept: 'text/html' };
      if (jar.header() !== '') headers.cookie = jar.header();
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const req = request(url, { method: body === undefined ? 'GET' : 'POST', headers, localAddress }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : [v ?? '']) h.append(k, one);
          const out = new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers: h });
          jar.store(out);
          resolve(out);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
}

test('log-in form: 5 wrong passwords, then 429 with Retry-After; after the back-off one try; the right password works', async (t) => {
  let now = Date.now();
  const { server } = await startFixture(t, { clock: () => now });
  await fullFlow(server.url, { email: 'gus@example.org', password: PASSWORD, mode: 'signup' });
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  const wrong = { email: 'gus@example.org', password: 'not it' };
  for (let i = 0; i < 5; i += 1) {
    const res = await browse(jar, `${url}/login`, { form: wrong });
    assert.equal(res.status, 200, `attempt ${i + 1}`);
    assert.match(await res.text(), /Wrong e-mail address or password/);
  }
  const throttled = await browse(jar, `${url}/login`, { form: wrong });
  assert.equal(throttled.status, 429);
  assert.equal(throttled.headers.get('retry-after'), '1');
  assert.match(throttled.headers.get('content-type') ?? '', /^text\/html/);
  const html = await throttled.text();
  assert.match(html, /role="alert"[^>]*>Too many attempts; try again in 1 second\./);
  assert.match(html, /<form method="post" action="[^"]*\/login">/, 'the form again');
  assert.match(html, /value="gus@example\.org"/);
  // The right password is refused too while the back-off runs (else the throttle would be an oracle).
  const early = await browse(jar, `${url}/login`, { form: { email: 'GUS@example.org', password: PASSWORD } });
  assert.equal(early.status, 429);
  await early.arrayBuffer();

  now += 1000;
  const sixth = await browse(jar, `${url}/login`, { form: wrong });
  assert.equal(sixth.status, 200, 'one try after waiting out the back-off');
  await sixth.arrayBuffer();
  const again = await browse(jar, `${url}/login`, { form: wrong });
  assert.equal(again.status, 429);
  assert.equal(again.headers.get('retry-after'), '2', 'doubled');
  await again.arrayBuffer();

  now += 2000;
  const callback = await submitAndFollow(jar, server.url, url, 'login', { email: 'gus@example.org', password: PASSWORD });
  assert.ok(callback.href.startsWith(REDIRECT_URI));
  assert.ok(callback.searchParams.get('code') !== null);
});

test('300 parallel wrong passwords: at most 5 reach verification; another account from another address is unaffected', async (t) => {
  // A clock that stands still: the 1 s back-off must not run out while this test is still busy.
  const now = Date.now();
  const { server } = await startFixture(t, { clock: () => now });
  await fullFlow(server.url, { email: 'victim@example.org', password: PASSWORD, mode: 'signup' });
  await fullFlow(server.url, { email: 'bystander@example.org', password: PASSWORD, mode: 'signup' });
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });

  const statuses = await Promise.all(
    Array.from({ length: 300 }, async (_, i) => {
      const res = await browse(jar, `${url}/login`, { form: { email: 'victim@example.org', password: `guess ${i}` } });
      const text = await res.text();
      // A 200 here is a verified (wrong) password; a 429 never got near scrypt.
      if (res.status === 200) assert.match(text, /Wrong e-mail address or password/);
      else assert.ok(Number(res.headers.get('retry-after')) >= 1);
      return res.status;
    }),
  );
  const verified = statuses.filter((s) => s === 200).length;
  assert.ok(verified <= 5, `${verified} attempts reached password verification`);
  assert.ok(verified >= 1);
  assert.equal(statuses.filter((s) => s === 429).length, 300 - verified);

  // Another person, another address: their wrong and right passwords are answered normally.
  const other = browseFrom('127.0.0.2');
  const jar2 = new CookieJar();
  const { challenge } = pkcePair();
  const start = await other(jar2, authorizeUrl(server.url, { clientId: client.client_id, challenge }));
  const page = location(start, server.url);
  await (await other(jar2, page)).arrayBuffer();
  const typo = await other(jar2, `${page}/login`, { email: 'bystander@example.org', password: 'typo' });
  assert.equal(typo.status, 200);
  await typo.arrayBuffer();
  // The attacked account stays throttled from any address…
  const victim = await other(jar2, `${page}/login`, { email: 'victim@example.org', password: PASSWORD });
  assert.equal(victim.status, 429);
  await victim.arrayBuffer();
  // …the bystander gets in.
  const ok = await other(jar2, `${page}/login`, { email: 'bystander@example.org', password: PASSWORD });
  assert.equal(ok.status, 303);
  assert.doesNotMatch(location(ok, server.url), /\/interaction\/[^/]+$/, 'past the log-in page');
});

test('sign-up form: 10 attempts per address, then 429 with Retry-After', async (t) => {
  const { server, store } = await startFixture(t);
  const client = await registerClient(server.url);
  const jar = new CookieJar();
  const { url } = await openInteraction(jar, server.url, { clientId: client.client_id, challenge: pkcePair().challenge });
  for (let i = 0; i < 10; i += 1) {
    const res = await browse(jar, `${url}/signup`, { form: { email: `probe${i}@example.org`, password: PASSWORD, confirm: 'mismatch!' } });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  }
  const res = await browse(jar, `${url}/signup`, { form: { email: 'new@example.org', password: PASSWORD, confirm: PASSWORD } });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.match(await res.text(), /Too many attempts; try again in 1 second\./);
  assert.equal(store.listUsers().length, 0, 'nothing was created');
});
