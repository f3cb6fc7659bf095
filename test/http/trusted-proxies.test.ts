/** HPD_TRUSTED_PROXIES: which entries are accepted, and which peers they cover. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveConfig } from '../../src/config/serve-config.ts';
import { parseTrustedProxyList, TrustedProxies } from '../../src/http/trusted-proxies.ts';

test('addresses and CIDR blocks of both families are accepted, trimmed', () => {
  assert.deepEqual(parseTrustedProxyList(' 10.0.0.5, 192.168.0.0/24 ,fd00::/8,::1'), ['10.0.0.5', '192.168.0.0/24', 'fd00::/8', '::1']);
  assert.deepEqual(parseTrustedProxyList('0.0.0.0/0'), ['0.0.0.0/0']);
});

test('anything else is refused, so a typo stops the start instead of leaving the proxy untrusted', () => {
  for (const bad of [
    '',
    ',',
    'haproxy.internal',
    '10.0.0.256',
    '10.0.0.0/33',
    '10.0.0.0/',
    '10.0.0.0/08',
    'fd00::/129',
    '1.2.3.4:80',
    'fe80::1%eth0',
    '10.0.0.1 10.0.0.2',
  ])
    assert.equal(parseTrustedProxyList(bad), undefined, bad);
});

test('the setting refuses a bad value with one line naming it', () => {
  assert.throws(
    () => serveConfig({ HPD_TRUSTED_PROXIES: '10.0.0.1,lb.example' }),
    /HPD_TRUSTED_PROXIES must be comma-separated IP addresses or CIDR blocks.*lb\.example/,
  );
  assert.deepEqual(serveConfig({}).trustedProxies, []);
  assert.deepEqual(serveConfig({ HPD_TRUSTED_PROXIES: '127.0.0.1' }).trustedProxies, ['127.0.0.1']);
});

test('blocks cover exactly their prefix; IPv4 peers match in either form', () => {
  const t = new TrustedProxies(['10.1.0.0/16', '192.168.7.9', 'fd00:1::/32', '172.16.0.0/12']);
  for (const yes of ['10.1.0.1', '10.1.255.255', '::ffff:10.1.2.3', '192.168.7.9', 'fd00:1:ffff::1', '172.31.0.1'])
    assert.equal(t.has(yes), true, yes);
  for (const no of ['10.2.0.1', '192.168.7.8', 'fd00:2::1', '172.32.0.1', '::1', 'garbage', undefined])
    assert.equal(t.has(no), false, String(no));
  assert.equal(t.hasRaw(Uint8Array.from([10, 1, 9, 9]).buffer), true);
  assert.equal(t.hasRaw(Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 9]).buffer), true);
  assert.equal(t.hasRaw(Uint8Array.from([10, 2, 0, 1]).buffer), false);
  assert.equal(new TrustedProxies([]).has('127.0.0.1'), false);
});
