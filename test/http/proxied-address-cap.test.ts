/**
 * The per-address REST limit of clients behind a trusted proxy, counted by request and close
 * (src/http/proxied-address-cap.ts); through the real HAProxy in test/cluster/client-address.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROXIED_IDLE_MS, ProxiedAddressCap } from '../../src/http/proxied-address-cap.ts';

const addr = (...b: number[]): ArrayBuffer => Uint8Array.from(b).buffer;
const A = addr(203, 0, 113, 1);
const B = addr(203, 0, 113, 2);
const A_MAPPED = addr(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 203, 0, 113, 1);

test('a client holds at most max connections; more requests on a held connection are always served', () => {
  const cap = new ProxiedAddressCap(2);
  assert.equal(cap.admit(A, 'p1'), true);
  assert.equal(cap.admit(A, 'p2'), true);
  assert.equal(cap.admit(A, 'p3'), false);
  assert.equal(cap.admit(A, 'p1'), true, 'a keep-alive request on a counted connection');
  assert.equal(cap.admit(A_MAPPED, 'p4'), false, 'the same client over IPv6-mapped IPv4');
  assert.equal(cap.admit(B, 'p1'), true, 'another client, even with the same port');
  assert.equal(cap.held(A), 2);
});

test("a close frees a place for the client; a refused connection's close frees none", () => {
  const cap = new ProxiedAddressCap(2);
  cap.admit(A, 'p1');
  cap.admit(A, 'p2');
  assert.equal(cap.admit(A, 'p3'), false);
  cap.closed(A); // p3, refused
  assert.equal(cap.held(A), 2);
  assert.equal(cap.admit(A, 'p4'), false);
  cap.closed(A); // p4, refused
  cap.closed(A); // one of the counted ones
  assert.equal(cap.held(A), 1);
  assert.equal(cap.admit(A, 'p5'), true);
  cap.closed(addr()); // a connection without a header (the proxy's health check)
  cap.closed(B); // a client with nothing counted
  assert.equal(cap.held(A), 2);
});

test("a close retires the client's least recently used connection", () => {
  const cap = new ProxiedAddressCap(3);
  cap.admit(A, 'p1');
  cap.admit(A, 'p2');
  cap.admit(A, 'p3');
  cap.admit(A, 'p1');
  cap.closed(A); // p2 is the least recently used
  assert.equal(cap.admit(A, 'p1'), true);
  assert.equal(cap.admit(A, 'p3'), true);
  assert.equal(cap.held(A), 2);
  assert.equal(cap.admit(A, 'p2'), true, 'p2 counts again as a new connection');
  assert.equal(cap.admit(A, 'p9'), false);
});

test('a connection unused for longer than uWS keeps an idle one is no longer counted', () => {
  let now = 0;
  const cap = new ProxiedAddressCap(2, 1, () => now);
  cap.admit(A, 'p1');
  now = 5_000;
  cap.admit(A, 'p2');
  assert.equal(cap.admit(A, 'p3'), false);
  now = PROXIED_IDLE_MS + 1;
  assert.equal(cap.admit(A, 'p3'), true, 'p1 idled out');
  assert.equal(cap.held(A), 2);
});

test('each of several threads holds its share of the limit', () => {
  const cap = new ProxiedAddressCap(4, 2);
  assert.equal(cap.admit(A, 'p1'), true);
  assert.equal(cap.admit(A, 'p2'), true);
  assert.equal(cap.admit(A, 'p3'), false);
});
