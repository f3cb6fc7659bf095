/**
 * The PROXY protocol v2 header on the node:http listeners (MCP, authorization server): the parser on
 * its own (every malformed or truncated shape), then a real listener with a trusted peer and with an
 * untrusted one, over real sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createNodeListener, type NodeListener } from '../../src/http/node-listener.ts';
import { clientAddressOf, ipv6Text, MAX_PROXY_HEADER_BYTES, parseProxyHeader } from '../../src/http/proxy-protocol.ts';
import { TrustedProxies } from '../../src/http/trusted-proxies.ts';

const SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

/** A v2 header: `verCmd` 0x20 LOCAL, 0x21 PROXY; `fam` 0x11 TCP/IPv4, 0x21 TCP/IPv6, 0x00 UNSPEC. */
function v2(verCmd: number, fam: number, body: Buffer, declared = body.length): Buffer {
  const h = Buffer.alloc(16);
  SIGNATURE.copy(h);
  h[12] = verCmd;
  h[13] = fam;
  h.writeUInt16BE(declared, 14);
  return Buffer.concat([h, body]);
}

const V4_BODY = Buffer.from([203, 0, 113, 7, 127, 0, 0, 1, 0x30, 0x39, 0x1f, 0x90]);
const V6_SRC = Buffer.from('20010db8000000000000000000000001', 'hex');
const V6_BODY = Buffer.concat([V6_SRC, Buffer.alloc(16), Buffer.from([0xd4, 0x31, 0x1f, 0x90])]);

test('the parser reads IPv4 and IPv6 sources, with TLVs after the addresses', () => {
  assert.deepEqual(parseProxyHeader(v2(0x21, 0x11, V4_BODY)), { kind: 'proxy', length: 28, address: '203.0.113.7', port: 12345 });
  assert.deepEqual(parseProxyHeader(v2(0x21, 0x21, V6_BODY)), { kind: 'proxy', length: 52, address: '2001:db8::1', port: 54321 });
  const withTlv = v2(0x21, 0x11, Buffer.concat([V4_BODY, Buffer.from([0x04, 0x00, 0x02, 0xaa, 0xbb])]));
  assert.deepEqual(parseProxyHeader(Buffer.concat([withTlv, Buffer.from('GET / HTTP/1.1\r\n')])), {
    kind: 'proxy',
    length: 33,
    address: '203.0.113.7',
    port: 12345,
  });
});

test('LOCAL, UNSPEC and AF_UNIX headers leave the connection its own address', () => {
  assert.deepEqual(parseProxyHeader(v2(0x20, 0x00, Buffer.alloc(0))), { kind: 'local', length: 16 });
  assert.deepEqual(parseProxyHeader(v2(0x20, 0x11, V4_BODY)), { kind: 'local', length: 28 });
  assert.deepEqual(parseProxyHeader(v2(0x21, 0x00, Buffer.alloc(0))), { kind: 'local', length: 16 });
  assert.deepEqual(parseProxyHeader(v2(0x21, 0x31, Buffer.alloc(216))), { kind: 'local', length: 232 });
});

test('bytes that do not start with the signature are no header; a prefix of it is not enough to decide', () => {
  assert.deepEqual(parseProxyHeader(Buffer.from('GET / HTTP/1.1\r\n')), { kind: 'absent' });
  assert.deepEqual(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n')), { kind: 'absent' });
  assert.deepEqual(parseProxyHeader(Buffer.from('\r\n\r\nGET')), { kind: 'absent' });
  assert.deepEqual(parseProxyHeader(SIGNATURE.subarray(0, 5)), { kind: 'incomplete' });
  assert.deepEqual(parseProxyHeader(Buffer.alloc(0)), { kind: 'incomplete' });
});

test('a truncated header is incomplete at every length short of its end', () => {
  const whole = v2(0x21, 0x21, V6_BODY);
  for (let n = 0; n < whole.length; n++) assert.equal(parseProxyHeader(whole.subarray(0, n)).kind, 'incomplete', `${n} bytes`);
  assert.equal(parseProxyHeader(whole).kind, 'proxy');
});

test('malformed headers are refused with a reason', () => {
  const cases: Array<[string, Buffer]> = [
    ['version 1', v2(0x11, 0x11, V4_BODY)],
    ['version 3', v2(0x31, 0x11, V4_BODY)],
    ['command 2', v2(0x22, 0x11, V4_BODY)],
    ['family 4', v2(0x21, 0x41, V4_BODY)],
    ['transport 3', v2(0x21, 0x13, V4_BODY)],
    ['IPv4 with 3 address bytes', v2(0x21, 0x11, Buffer.alloc(3))],
    ['IPv6 with 12 address bytes', v2(0x21, 0x21, V4_BODY)],
    ['AF_UNIX with 12 address bytes', v2(0x21, 0x31, V4_BODY)],
    ['longer than the limit', v2(0x21, 0x11, Buffer.alloc(0), MAX_PROXY_HEADER_BYTES)],
  ];
  for (const [name, bytes] of cases) assert.equal(parseProxyHeader(bytes).kind, 'invalid', name);
});

test('IPv6 text is RFC 5952: lowercase, the longest zero run compressed, IPv4-mapped as dotted IPv4', () => {
  const hex = (h: string): Uint8Array => Buffer.from(h, 'hex');
  assert.equal(ipv6Text(hex('20010db8000000000000000000000001')), '2001:db8::1');
  assert.equal(ipv6Text(hex('00000000000000000000000000000001')), '::1');
  assert.equal(ipv6Text(hex('00000000000000000000000000000000')), '::');
  assert.equal(ipv6Text(hex('20010db8000000010000000000000000')), '2001:db8:0:1::');
  assert.equal(ipv6Text(hex('20010db800000001000100010001ABCD')), '2001:db8:0:1:1:1:1:abcd');
  assert.equal(ipv6Text(hex('20010000000000010000000000000001')), '2001:0:0:1::1');
  assert.equal(ipv6Text(hex('00000000000000000000ffffcb007107')), '203.0.113.7');
});

/** A listener answering with the address its per-client rules would key on (and the request body). */
async function echoListener(trusted: readonly string[], headersTimeoutMs = 2000): Promise<{ listener: NodeListener; port: number }> {
  const listener = createNodeListener(
    'test',
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => res.end(`${clientAddressOf(req.socket)} ${req.method} ${req.url} ${body}`));
    },
    { headersTimeoutMs, requestTimeoutMs: Math.max(headersTimeoutMs, 2000) },
    new TrustedProxies(trusted),
  );
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  return { listener, port: (listener.server.address() as AddressInfo).port };
}

interface Exchange {
  /** Everything the server sent before it closed (or before `waitMs`). */
  readonly received: string;
  /** Whether the server closed the connection within the wait. */
  readonly closed: boolean;
}

/** Sends `chunks` (a pause between each) and collects the answer until the server closes or `waitMs` pass. */
function exchange(port: number, chunks: readonly Buffer[], waitMs = 1500, localAddress = '127.0.0.1'): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ port, host: '127.0.0.1', localAddress });
    let received = '';
    let closed = false;
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => {});
    socket.once('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ received, closed });
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ received, closed });
    }, waitMs);
    socket.once('connect', async () => {
      for (const c of chunks) {
        socket.write(c);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  });
}

const bodies = (raw: string): string[] =>
  raw
    .split('HTTP/1.1 ')
    .slice(1)
    .map((r) => r.slice(r.indexOf('\r\n\r\n') + 4));

const GET = (path: string): Buffer => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);

test("a trusted peer's header names the client of every request on the connection, bodies and pipelining intact", async (t) => {
  const { listener, port } = await echoListener(['127.0.0.1']);
  t.after(() => listener.close(0));
  const post = Buffer.from('POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello');
  // Header and two pipelined requests in one write: the bytes after the header go to the HTTP parser.
  const one = await exchange(port, [Buffer.concat([v2(0x21, 0x11, V4_BODY), GET('/a'), post])], 800);
  assert.deepEqual(bodies(one.received), ['203.0.113.7 GET /a ', '203.0.113.7 POST /p hello']);
  // The header a byte at a time, then a request.
  const header = v2(0x21, 0x21, V6_BODY);
  const split = await exchange(port, [...Array.from(header, (b) => Buffer.from([b])), GET('/b')], 2000);
  assert.deepEqual(bodies(split.received), ['2001:db8::1 GET /b ']);
  // Header and half a request in one write, the rest later.
  const whole = Buffer.concat([v2(0x21, 0x11, V4_BODY), post]);
  const halves = await exchange(port, [whole.subarray(0, 50), whole.subarray(50)], 800);
  assert.deepEqual(bodies(halves.received), ['203.0.113.7 POST /p hello']);
});

test("a trusted peer's connection without a header, or with LOCAL, keeps the peer's address", async (t) => {
  const { listener, port } = await echoListener(['127.0.0.0/8']);
  t.after(() => listener.close(0));
  const plain = await exchange(port, [GET('/plain')], 800);
  assert.deepEqual(bodies(plain.received), ['127.0.0.1 GET /plain ']);
  const local = await exchange(port, [Buffer.concat([v2(0x20, 0x00, Buffer.alloc(0)), GET('/local')])], 800);
  assert.deepEqual(bodies(local.received), ['127.0.0.1 GET /local ']);
});

test('a malformed header from a trusted peer closes the connection without an answer', async (t) => {
  const { listener, port } = await echoListener(['127.0.0.1']);
  t.after(() => listener.close(0));
  for (const bad of [v2(0x11, 0x11, V4_BODY), v2(0x21, 0x11, Buffer.alloc(3)), v2(0x21, 0x11, Buffer.alloc(0), 60_000)]) {
    const r = await exchange(port, [Buffer.concat([bad, GET('/x')])]);
    assert.equal(r.closed, true);
    assert.equal(r.received, '');
  }
});

test("a trusted peer's header that stops short is cut at the header deadline", async (t) => {
  const { listener, port } = await echoListener(['127.0.0.1'], 300);
  t.after(() => listener.close(0));
  const started = Date.now();
  const r = await exchange(port, [v2(0x21, 0x11, V4_BODY).subarray(0, 20)], 3000);
  assert.equal(r.closed, true);
  assert.equal(r.received, '');
  assert.ok(Date.now() - started < 2500, `closed after ${Date.now() - started} ms`);
});

test('a header from a peer not in the list is not believed: the request is refused as not HTTP', async (t) => {
  const { listener, port } = await echoListener(['127.0.0.2']);
  t.after(() => listener.close(0));
  const forged = await exchange(port, [Buffer.concat([v2(0x21, 0x11, V4_BODY), GET('/forged')])]);
  assert.match(forged.received, /^HTTP\/1\.1 400 /);
  assert.doesNotMatch(forged.received, /203\.0\.113\.7/);
  // The same peer without a header is served under its own address.
  const plain = await exchange(port, [GET('/plain')], 800);
  assert.deepEqual(bodies(plain.received), ['127.0.0.1 GET /plain ']);
  // The trusted address itself is believed.
  const trusted = await exchange(port, [Buffer.concat([v2(0x21, 0x11, V4_BODY), GET('/t')])], 800, '127.0.0.2');
  assert.deepEqual(bodies(trusted.received), ['203.0.113.7 GET /t ']);
});

test('a shutdown closes a trusted connection still waiting for its header', async () => {
  const { listener, port } = await echoListener(['127.0.0.1'], 10_000);
  const pending = exchange(port, [SIGNATURE.subarray(0, 4)], 5000);
  await new Promise((r) => setTimeout(r, 200));
  const started = Date.now();
  await listener.close(100);
  const r = await pending;
  assert.equal(r.closed, true);
  assert.ok(Date.now() - started < 2000);
});
