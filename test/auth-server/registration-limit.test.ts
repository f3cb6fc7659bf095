/**
 * Anonymous dynamic client registration is bounded: 80,000 `POST /reg` from one
 * client in ~66 s were all 201, and every client was kept forever (oauth.mdb grew from 20 KB to 110 MB).
 * Now one address gets {@link REGISTRATIONS_PER_HOUR} an hour, then 429 with Retry-After, while another
 * address still registers; and a client that never completes an authorization expires after a day,
 * while one with a grant stays (real LMDB store, aged on an injected clock, swept).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openOAuthStore } from '../../src/auth-server/lmdb-adapter.ts';
import { ALL_REGISTRATIONS_PER_HOUR, createRegistrationLimit, REGISTRATIONS_PER_HOUR } from '../../src/auth-server/registration-limit.ts';
import { expireUnusedClients, UNUSED_CLIENT_TTL_S } from '../../src/auth-server/unused-clients.ts';
import { REDIRECT_URI, startFixture } from './oauth-test-client.ts';

/** POST /reg from `localAddress` (any 127.x address reaches the loopback listener). */
function register(url: string, localAddress: string): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  const body = JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', client_name: 'flood' });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/reg`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('one address gets its registrations an hour, then 429 with Retry-After; another address still registers', async (t) => {
  const { server } = await startFixture(t);
  const statuses: number[] = [];
  for (let i = 0; i < REGISTRATIONS_PER_HOUR + 5; i++) statuses.push((await register(server.url, '127.0.0.1')).status);
  assert.deepEqual(statuses, [...Array(REGISTRATIONS_PER_HOUR).fill(201), ...Array(5).fill(429)]);
  const refused = await register(server.url, '127.0.0.1');
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.retryAfter) > 0 && Number(refused.retryAfter) <= 3600, `Retry-After ${refused.retryAfter}`);
  assert.equal((JSON.parse(refused.body) as { error: string }).error, 'temporarily_unavailable');
  assert.equal((await register(server.url, '127.0.0.2')).status, 201, 'another address is not limited by the first');
});

test('a client never used expires after a day; a client with a grant stays', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-unused-clients-'));
  let now = Date.now();
  const store = expireUnusedClients(openOAuthStore(join(dir, 'oauth.mdb'), () => now));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clients = store.adapterFor('Client');
  const grants = store.adapterFor('Grant');
  await clients.upsert('unused', { client_id: 'unused', redirect_uris: [REDIRECT_URI] }, undefined);
  await clients.upsert('used', { client_id: 'used', redirect_uris: [REDIRECT_URI] }, undefined);
  await grants.upsert('grant-1', { accountId: 'usr_1', clientId: 'used' }, 14 * 86_400);
  assert.ok(await clients.find('unused'), 'a new client is there at first');
  now += (UNUSED_CLIENT_TTL_S + 120) * 1000;
  assert.ok((await store.sweep()) >= 1);
  assert.equal(await clients.find('unused'), undefined, 'the client nobody authorized expired');
  assert.ok(await clients.find('used'), 'the client a user authorized stays');
});

test('every address together gets ALL_REGISTRATIONS_PER_HOUR: rotating addresses cannot store unused clients without bound', async () => {
  let now = 0;
  const limit = createRegistrationLimit(() => now);
  const addresses = Math.ceil(ALL_REGISTRATIONS_PER_HOUR / REGISTRATIONS_PER_HOUR) + 5;
  let allowed = 0;
  let refusedByServer = 0;
  for (let a = 0; a < addresses; a++)
    for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) {
      const r = await limit.take(`2001:db8::${a}`);
      if (r === null) allowed++;
      else if (r.scope === 'server') refusedByServer++;
    }
  assert.equal(allowed, ALL_REGISTRATIONS_PER_HOUR);
  assert.equal(refusedByServer, addresses * REGISTRATIONS_PER_HOUR - ALL_REGISTRATIONS_PER_HOUR);
  const refusal = await limit.take('2001:db8::ffff');
  assert.equal(refusal?.scope, 'server');
  assert.equal(refusal?.wait, Math.ceil(3600 / ALL_REGISTRATIONS_PER_HOUR), 'the next one is allowed when the bucket refills one');
  now += 3_600_000 / ALL_REGISTRATIONS_PER_HOUR;
  assert.equal(await limit.take('2001:db8::ffff'), null, 'refilled evenly over the hour');
  // A refused address keeps its own tokens: the server's refusal took nothing from it.
  now += 3_600_000;
  for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) assert.equal(await limit.take('2001:db8::1'), null);
});
