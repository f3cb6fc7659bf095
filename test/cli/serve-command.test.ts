/**
 * `hpd serve` as an operator runs it: on an empty data directory it first builds the embedded default
 * dataset (asked with --build-if-missing, since the directory is not the default one), then serves; a key made with `hpd keys create` works at once; SIGTERM drains and exits 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../helpers/services.ts';

const HPD = fileURLToPath(new URL('../../bin/hpd.js', import.meta.url));

test('hpd serve --build-if-missing builds the default dataset when none exists, serves REST, MCP and the authorization server, and stops cleanly on SIGTERM', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-serve-'));
  const [restPort, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
  const env = {
    ...process.env,
    HPD_DATA_DIR: join(dir, 'builds'),
    HPD_CACHE_DIR: join(dir, 'cache'),
    HPD_STATE_DIR: join(dir, 'state'),
    HPD_PORT: String(restPort),
    HPD_MCP_PORT: String(mcpPort),
    HPD_AUTH_PORT: String(authPort),
    HPD_BASE_URL: 'http://hpd.example',
  };
  delete (env as Record<string, string | undefined>).NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, [HPD, 'serve', '--build-if-missing'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  assert.match(stderr, /building the embedded default datasets \(PY2024 and PY2025\)/);
  assert.match(stdout, /serving years 2024, 2025/);
  // The start-up line names the uWS build and the Node that loaded it; on Node 20 oidc-provider (the
  // embedded authorization server) also warned "Unsupported runtime", which a supported Node never does.
  assert.match(stdout, new RegExp(`with uws-legacy [\\d.]+ on Node ${process.version.replaceAll('.', '\\.')}, `));
  assert.doesNotMatch(`${stdout}${stderr}`, /Unsupported runtime/);

  // The process replaced itself, same pid, with V8's memory reducer off (bin/hpd.js says why).
  const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(cmdline.includes('--no-memory-reducer'), cmdline.join(' '));
  assert.equal(cmdline.filter((a) => a === '--no-memory-reducer').length, 1);

  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  assert.equal(health.status, 200);
  const noKey = await fetch(`http://127.0.0.1:${port}/v1/health/years`);
  assert.equal(noKey.status, 401);

  const made = spawnSync(process.execPath, [HPD, 'keys', 'create', '--tier', 'free', '--label', 'serve test'], { env, encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const key = made.stdout.trim();
  const years = await fetch(`http://127.0.0.1:${port}/v1/health/years`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(years.status, 200);
  const body = (await years.json()) as {
    current_year: number;
    available_years: number[];
    years: { year: number; states: string[]; real_premium_states: string[] }[];
    _links: { self: { href: string } };
  };
  assert.deepEqual(body.available_years, [2024, 2025]);
  assert.equal(body.current_year, 2025);
  // 2024: the three state-exchange bundles, real premiums; 2025: the 31 HealthCare.gov states, modeled.
  assert.deepEqual(body.years[0], {
    year: 2024,
    states: ['CT', 'RI', 'VT'],
    real_premium_states: ['CT', 'RI', 'VT'],
    modeled_premium_states: [],
  });
  assert.equal(body.years[1]?.states.length, 31);
  assert.deepEqual(body.years[1]?.real_premium_states, []);
  assert.equal(body._links.self.href, 'http://hpd.example/v1/health/years', 'links use HPD_BASE_URL');
  const search = await fetch(`http://127.0.0.1:${port}/v1/health/plans?zip=77002&age=40`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(search.status, 200);
  assert.equal(((await search.json()) as { data_source: string }).data_source, 'puf_data+modeled_premiums');
  const hartford = await fetch(`http://127.0.0.1:${port}/v1/health/plans?zip=06103&age=40&year=2024`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(hartford.status, 200);
  const ct = (await hartford.json()) as { data_source: string; data_freshness: string; total: number };
  assert.deepEqual([ct.data_source, ct.data_freshness], ['puf_data', 'PY2024 as of 2024-02-12']);
  assert.ok(ct.total > 0);

  // MCP and the authorization server run beside REST, named by their default identifiers.
  assert.match(
    stdout,
    new RegExp(
      `MCP on http://127\\.0\\.0\\.1:${mcpPort} as http://127\\.0\\.0\\.1:${mcpPort}/mcp; authorization server embedded at http://127\\.0\\.0\\.1:${authPort}`,
    ),
  );
  const prm = (await (await fetch(`http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource/mcp`)).json()) as {
    resource: string;
    authorization_servers: string[];
  };
  assert.deepEqual(prm.authorization_servers, [`http://127.0.0.1:${authPort}`]);
  const as = (await (await fetch(`http://127.0.0.1:${authPort}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
  assert.equal(as.issuer, `http://127.0.0.1:${authPort}`);
  const mcpNoKey = await fetch(prm.resource, { method: 'POST', body: '{}' });
  assert.equal(mcpNoKey.status, 401);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  assert.match(stderr, /SIGTERM: draining/);
  assert.match(stderr, /stopped/);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'the REST port is closed after the drain');
  await assert.rejects(fetch(`http://127.0.0.1:${mcpPort}/mcp`), 'the MCP port is closed');
  await assert.rejects(fetch(`http://127.0.0.1:${authPort}/.well-known/openid-configuration`), 'the authorization server is closed');
});
