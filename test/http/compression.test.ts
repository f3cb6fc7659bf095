/**
 * Content codings (src/http/compression.ts): q-value parsing, and through a real server with raw bytes
 * (node:http does not decode, unlike fetch): Content-Encoding, Vary, the same weak ETag for every
 * coding, HEAD lengths, and search pages left uncompressed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chooseCoding, compressVariants } from '../../src/http/compression.ts';
import { startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

describe('chooseCoding', () => {
  const both = { br: Buffer.from('b'), gzip: Buffer.from('g') };
  const cases: Array<[string, 'br' | 'gzip' | null]> = [
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['gzip;q=0', null],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0', null],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0, *;q=0.1', 'br'],
    ['identity;q=0', null],
    ['GZIP; Q=0.5', 'gzip'],
    ['x-gzip', 'gzip'],
    ['deflate, compress', null],
    ['gzip;q=abc, br;q=2', null],
    ['gzip;q=0.001', 'gzip'],
    [';;,,, ;q=1', null],
  ];
  for (const [header, expected] of cases) {
    test(`Accept-Encoding: ${JSON.stringify(header)} -> ${expected ?? 'identity'}`, () => {
      assert.equal(chooseCoding(header, both), expected);
    });
  }
  test('only codings the body has are chosen', () => {
    assert.equal(chooseCoding('br', { gzip: Buffer.from('g') }), null);
    assert.equal(chooseCoding('br, gzip;q=0.5', { gzip: Buffer.from('g') }), 'gzip');
    assert.equal(chooseCoding('br, gzip', {}), null);
  });
  test('bodies too small to gain are not compressed', () => {
    assert.deepEqual(compressVariants(Buffer.from('{"years":[2025]}')), {});
  });
});

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

function raw(url: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('compressed responses', () => {
  let s: FixtureServer;
  before(async () => {
    s = await startFixtureServer();
  });
  after(() => s.close());
  const auth = (): Record<string, string> => ({ authorization: `Bearer ${s.keys.pro}` });

  for (const path of ['/v1/health/plans/11111TX0010001-01', '/v1/health/zips/77477', '/v1/openapi.json']) {
    test(`${path}: br and gzip decode to the identity body, same weak ETag, Vary: Accept-Encoding`, async () => {
      const identity = await raw(`${s.url}${path}`, { ...auth(), 'accept-encoding': 'identity' });
      assert.equal(identity.status, 200);
      assert.equal(identity.headers['content-encoding'], undefined);
      assert.match(String(identity.headers.vary), /Accept-Encoding/);
      for (const [coding, decode] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const r = await raw(`${s.url}${path}`, { ...auth(), 'accept-encoding': `${coding}, identity;q=0.5` });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-encoding'], coding);
        assert.match(String(r.headers.vary), /Accept-Encoding/);
        assert.equal(r.headers.etag, identity.headers.etag);
        assert.equal(Number(r.headers['content-length']), r.body.length);
        assert.ok(r.body.length < identity.body.length, `${coding} is smaller`);
        assert.deepEqual(decode(r.body), identity.body);
        const head = await raw(`${s.url}${path}`, { ...auth(), 'accept-encoding': coding }, 'HEAD');
        assert.equal(head.headers['content-encoding'], coding);
        assert.equal(head.headers['content-length'], String(r.body.length), 'HEAD: the encoded length');
        if (path !== '/v1/openapi.json') {
          const cond = await raw(`${s.url}${path}`, {
            ...auth(),
            'accept-encoding': coding,
            'if-none-match': String(identity.headers.etag),
          });
          assert.equal(cond.status, 304, 'the weak ETag validates every coding');
        }
      }
    });
  }

  test('search pages are sent uncompressed whatever the client accepts', async () => {
    const r = await raw(`${s.url}/v1/health/plans?zip=77002&age=40`, { ...auth(), 'accept-encoding': 'br, gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers.vary, 'Authorization');
    assert.doesNotThrow(() => JSON.parse(r.body.toString('utf8')));
  });

  test('a malformed Accept-Encoding is never an error', async () => {
    for (const ae of [';;;', 'br;q=', 'gzip;q=-1', '\u00ff', 'br;q=0.5;q=0.7,,,']) {
      const r = await raw(`${s.url}/v1/health/plans/11111TX0010001-01`, { ...auth(), 'accept-encoding': ae });
      assert.equal(r.status, 200, ae);
    }
  });
});
