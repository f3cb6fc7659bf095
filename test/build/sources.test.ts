/**
 * @module Tests of build-input resolution: command line, then mirror, then cache, then download from a real local
 * HTTP server; checksums; and the error messages an operator gets when an input cannot be found.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createProgress } from '../../build/progress.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../build/read/diagnostics.ts';
import { loadSourcesFile, resolveInputs, sha256File, type InputSpec, type ResolveOptions, type SourcesFile } from '../../build/sources.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-sources-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
let serial = 0;

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** A fresh root directory with a cache folder. */
function workspace(): { root: string; cacheDir: string; write(rel: string, content: string): string } {
  const root = path.join(base, `ws-${++serial}`);
  fs.mkdirSync(root, { recursive: true });
  return {
    root,
    cacheDir: path.join(root, 'cache'),
    write(rel, content) {
      const p = path.join(root, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
      return p;
    },
  };
}

function options(ws: { root: string; cacheDir: string }, over: Partial<ResolveOptions> = {}): ResolveOptions {
  return {
    root: ws.root,
    cacheDir: ws.cacheDir,
    overrides: {},
    offline: true,
    fetchOptional: false,
    progress: createProgress({ tty: false, quiet: true }),
    ...over,
  };
}

function input(over: Partial<InputSpec> = {}): InputSpec {
  return {
    title: 'Plan Attributes',
    required: true,
    url: 'http://127.0.0.1:9/files/plan-attributes.csv',
    url_sha256: null,
    mirrors: [{ path: 'mirror/plan-attributes.csv' }],
    ...over,
  };
}

const sources = (inputs: Record<string, InputSpec>, year = 2025): SourcesFile => ({ year, inputs });

/** A local HTTP server answering `routes` (path → status and body) and counting requests. */
async function serve(
  t: TestContext,
  routes: Record<string, { status: number; body: string | Buffer }>,
): Promise<{ url(p: string): string; requests: string[]; routes: typeof routes }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const r = routes[req.url ?? ''];
    if (r === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(r.status, { 'content-type': 'text/csv', 'content-length': String(Buffer.byteLength(r.body)) });
    res.end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: (p) => `http://127.0.0.1:${port}${p}`, requests, routes };
}

function isFatal(code: string, ...parts: string[]) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof FatalBuildError, String(err));
    assert.equal(err.code, code, err.message);
    for (const p of parts) assert.ok(err.message.includes(p), `"${p}" not in: ${err.message}`);
    return true;
  };
}

describe('loadSourcesFile and sha256File', () => {
  it('reads the repository sources file of 2025', () => {
    const s = loadSourcesFile(path.join(ROOT, 'data/sources/2025.json'));
    assert.equal(s.year, 2025);
    assert.equal(s.inputs.plan_attributes?.required, true);
    assert.equal(s.inputs.rates?.required, false);
  });

  it('fails on a missing file and on a file without { year, inputs }', () => {
    const ws = workspace();
    assert.throws(() => loadSourcesFile(path.join(ws.root, 'nope.json')), isFatal(DIAGNOSTIC_CODES.inputMissing, 'nope.json'));
    const bad = ws.write('bad.json', JSON.stringify({ inputs: {} }));
    assert.throws(() => loadSourcesFile(bad), isFatal(DIAGNOSTIC_CODES.badFormat, bad));
  });

  it('hashes a file with SHA-256', async () => {
    const ws = workspace();
    const p = ws.write('x.bin', 'hello, world\n');
    assert.equal(await sha256File(p), sha('hello, world\n'));
  });
});

describe('resolveInputs: local files', () => {
  it('takes the command-line path before the mirror, the mirror before the cache', async () => {
    const ws = workspace();
    const mirror = ws.write('mirror/plan-attributes.csv', 'mirror');
    const cached = ws.write('cache/2025/plan-attributes.csv', 'cache');
    const override = ws.write('elsewhere/my-plans.csv', 'override');
    const s = sources({ plan_attributes: input() });

    const byOverride = (await resolveInputs(s, options(ws, { overrides: { plan_attributes: override } }))).get('plan_attributes')!;
    assert.equal(byOverride.origin, 'command-line');
    assert.equal(byOverride.path, override);
    assert.equal(byOverride.sha256, sha('override'));
    assert.equal(byOverride.bytes, 8);
    assert.equal(byOverride.name, 'plan_attributes');
    assert.equal(byOverride.title, 'Plan Attributes');

    const byMirror = (await resolveInputs(s, options(ws))).get('plan_attributes')!;
    assert.equal(byMirror.origin, 'mirror');
    assert.equal(byMirror.path, mirror);
    assert.equal(byMirror.sha256, sha('mirror'));
    assert.equal(byMirror.checksumVerified, null);

    fs.rmSync(mirror);
    const byCache = (await resolveInputs(s, options(ws))).get('plan_attributes')!;
    assert.equal(byCache.origin, 'cache');
    assert.equal(byCache.path, cached);
    assert.equal(byCache.sha256, sha('cache'));
    assert.equal(byCache.url, 'http://127.0.0.1:9/files/plan-attributes.csv');
  });

  it('tries the mirrors in order and verifies a mirror checksum', async () => {
    const ws = workspace();
    const second = ws.write('mirror2/pa.csv', 'second');
    const s = sources({
      plan_attributes: input({ mirrors: [{ path: 'mirror/absent.zip' }, { path: 'mirror2/pa.csv', sha256: sha('second') }] }),
    });
    const r = (await resolveInputs(s, options(ws))).get('plan_attributes')!;
    assert.equal(r.origin, 'mirror');
    assert.equal(r.path, second);
    assert.equal(r.checksumVerified, true);
  });

  it('resolves a relative command-line path against the working directory', async () => {
    const ws = workspace();
    const p = ws.write('rel/pa.csv', 'x');
    const rel = path.relative(process.cwd(), p);
    const r = (await resolveInputs(sources({ plan_attributes: input() }), options(ws, { overrides: { plan_attributes: rel } }))).get(
      'plan_attributes',
    )!;
    assert.equal(r.path, p);
  });

  it('fails on a mirror whose sha256 is wrong', async () => {
    const ws = workspace();
    const mirror = ws.write('mirror/plan-attributes.csv', 'tampered');
    const s = sources({ plan_attributes: input({ mirrors: [{ path: 'mirror/plan-attributes.csv', sha256: sha('original') }] }) });
    await assert.rejects(
      resolveInputs(s, options(ws)),
      isFatal(DIAGNOSTIC_CODES.checksum, 'plan_attributes', mirror, sha('original'), sha('tampered')),
    );
  });

  it('offline with a required input missing: names the input, the places looked in and the official URL', async () => {
    const ws = workspace();
    const s = sources({ plan_attributes: input() });
    await assert.rejects(
      resolveInputs(s, options(ws)),
      isFatal(
        DIAGNOSTIC_CODES.inputMissing,
        'plan_attributes',
        path.join(ws.root, 'mirror/plan-attributes.csv'),
        path.join(ws.cacheDir, '2025', 'plan-attributes.csv'),
        'offline',
        'http://127.0.0.1:9/files/plan-attributes.csv',
        '--plan-attributes',
      ),
    );
  });

  it('leaves out an optional input that is missing, without an error', async () => {
    const ws = workspace();
    ws.write('mirror/plan-attributes.csv', 'pa');
    const s = sources({
      plan_attributes: input(),
      rates: input({ title: 'Rates', required: false, url: 'http://127.0.0.1:9/rate-puf.zip', mirrors: [{ path: 'mirror/rate-puf.zip' }] }),
    });
    const r = await resolveInputs(s, options(ws));
    assert.deepEqual([...r.keys()], ['plan_attributes']);
    const online = await resolveInputs(s, options(ws, { offline: false, fetchOptional: false }));
    assert.deepEqual([...online.keys()], ['plan_attributes']);
  });

  it('fails on an override of an unknown input or a missing file', async () => {
    const ws = workspace();
    ws.write('mirror/plan-attributes.csv', 'pa');
    const s = sources({ plan_attributes: input() });
    await assert.rejects(
      resolveInputs(s, options(ws, { overrides: { plans: '/x.csv' } })),
      isFatal(DIAGNOSTIC_CODES.inputMissing, '"plans"', 'plan_attributes'),
    );
    const missing = path.join(ws.root, 'none.csv');
    await assert.rejects(
      resolveInputs(s, options(ws, { overrides: { plan_attributes: missing } })),
      isFatal(DIAGNOSTIC_CODES.inputMissing, missing, '--plan-attributes'),
    );
  });
});

describe('resolveInputs: download', () => {
  const CONTENT = 'BusinessYear,PlanId\r\n2025,12345TX0010001-01\r\n';

  it('downloads into the cache with a verified checksum, then reuses the cache without a request', async (t) => {
    const srv = await serve(t, { '/puf/plan-attributes-puf.csv': { status: 200, body: CONTENT } });
    const ws = workspace();
    const url = srv.url('/puf/plan-attributes-puf.csv');
    const s = sources({ plan_attributes: input({ url, url_sha256: sha(CONTENT), mirrors: [{ path: 'mirror/absent.csv' }] }) });

    const first = (await resolveInputs(s, options(ws, { offline: false }))).get('plan_attributes')!;
    assert.equal(first.origin, 'download');
    assert.equal(first.path, path.join(ws.cacheDir, '2025', 'plan-attributes-puf.csv'));
    assert.equal(first.checksumVerified, true);
    assert.equal(first.sha256, sha(CONTENT));
    assert.equal(first.bytes, Buffer.byteLength(CONTENT));
    assert.equal(first.url, url);
    assert.equal(fs.readFileSync(first.path, 'utf8'), CONTENT);
    assert.deepEqual(fs.readdirSync(path.dirname(first.path)), ['plan-attributes-puf.csv']); // no .partial left
    assert.equal(srv.requests.length, 1);

    const second = (await resolveInputs(s, options(ws, { offline: false }))).get('plan_attributes')!;
    assert.equal(second.origin, 'cache');
    assert.equal(second.path, first.path);
    assert.equal(second.checksumVerified, true);
    assert.equal(srv.requests.length, 1);

    // Offline also finds the cached copy.
    const offline = (await resolveInputs(s, options(ws, { offline: true }))).get('plan_attributes')!;
    assert.equal(offline.origin, 'cache');
    assert.equal(srv.requests.length, 1);
  });

  it('downloads without verification when no url_sha256 is known', async (t) => {
    const srv = await serve(t, { '/a/sa.csv': { status: 200, body: CONTENT } });
    const ws = workspace();
    const s = sources({ service_area: input({ url: srv.url('/a/sa.csv'), mirrors: [] }) });
    const r = (await resolveInputs(s, options(ws, { offline: false }))).get('service_area')!;
    assert.equal(r.origin, 'download');
    assert.equal(r.checksumVerified, null);
    assert.equal(r.sha256, sha(CONTENT));
  });

  it('fails when the download does not match url_sha256', async (t) => {
    const srv = await serve(t, { '/puf/pa.csv': { status: 200, body: CONTENT } });
    const ws = workspace();
    const s = sources({ plan_attributes: input({ url: srv.url('/puf/pa.csv'), url_sha256: sha('something else'), mirrors: [] }) });
    await assert.rejects(
      resolveInputs(s, options(ws, { offline: false })),
      isFatal(DIAGNOSTIC_CODES.checksum, 'plan_attributes', sha('something else'), sha(CONTENT)),
    );
    assert.equal(srv.requests.length, 1);
  });

  it('does not keep a download that failed its checksum: the next build downloads again', async (t) => {
    // The module promises that an incomplete download never looks complete; a corrupt one must not either.
    const srv = await serve(t, { '/puf/pa.csv': { status: 200, body: 'truncated' } });
    const ws = workspace();
    const s = sources({ plan_attributes: input({ url: srv.url('/puf/pa.csv'), url_sha256: sha(CONTENT), mirrors: [] }) });
    await assert.rejects(resolveInputs(s, options(ws, { offline: false })), isFatal(DIAGNOSTIC_CODES.checksum));
    srv.routes['/puf/pa.csv'] = { status: 200, body: CONTENT }; // the server is fixed
    const r = (await resolveInputs(s, options(ws, { offline: false }))).get('plan_attributes')!;
    assert.equal(r.origin, 'download');
    assert.equal(r.checksumVerified, true);
    assert.equal(srv.requests.length, 2);
  });

  it('a required input answered with 404 fails, naming the URL', async (t) => {
    const srv = await serve(t, {});
    const ws = workspace();
    const url = srv.url('/puf/missing.zip');
    const s = sources({ plan_attributes: input({ url, mirrors: [{ path: 'mirror/pa.zip' }] }) });
    await assert.rejects(
      resolveInputs(s, options(ws, { offline: false })),
      isFatal(DIAGNOSTIC_CODES.inputMissing, 'plan_attributes', url, 'HTTP 404', path.join(ws.root, 'mirror/pa.zip')),
    );
    assert.deepEqual(srv.requests, ['/puf/missing.zip']);
    const cacheYear = path.join(ws.cacheDir, '2025');
    assert.deepEqual(fs.existsSync(cacheYear) ? fs.readdirSync(cacheYear) : [], []);
  });

  it('optional inputs: downloaded only with fetchOptional; a failed optional download is left out', async (t) => {
    const srv = await serve(t, { '/puf/rate-puf.csv': { status: 200, body: CONTENT } });
    const ws = workspace();
    const s = sources({
      rates: input({ title: 'Rates', required: false, url: srv.url('/puf/rate-puf.csv'), mirrors: [] }),
      benefits: input({ title: 'Benefits', required: false, url: srv.url('/puf/benefits.zip'), mirrors: [] }),
    });
    const without = await resolveInputs(s, options(ws, { offline: false, fetchOptional: false }));
    assert.equal(without.size, 0);
    assert.equal(srv.requests.length, 0);
    const withOptional = await resolveInputs(s, options(ws, { offline: false, fetchOptional: true }));
    assert.deepEqual([...withOptional.keys()], ['rates']);
    assert.equal(withOptional.get('rates')!.origin, 'download');
    assert.deepEqual([...srv.requests].sort(), ['/puf/benefits.zip', '/puf/rate-puf.csv']);
  });
});
