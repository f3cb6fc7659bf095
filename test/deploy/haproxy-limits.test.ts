/**
 * deploy/haproxy.cfg as shipped under the limits of ordinary machines: it starts at a low file
 * descriptor limit (no fixed maxconn that needs more descriptors than the hard limit allows), and its
 * request log never holds a credential a client sent (a `?api_key=` query string, an Authorization
 * header).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from '../../bench/lib/processes.ts';
import { HAPROXY, HAPROXY_CFG, haproxyEnv, startHaproxy } from '../helpers/haproxy.ts';
import { prepareServe, spawnServe } from '../helpers/serve-fixture.ts';

/** A descriptor limit well below the common 20,000 hard limit (Debian's default soft limit is 1,024). */
const LOW_NOFILE = 4096;

/** Everything the admin socket answers to `line`, or null while it is not there yet. */
function admin(path: string, line: string): Promise<string | null> {
  return new Promise((resolve) => {
    const s = connect(path);
    let got = '';
    s.setTimeout(2000, () => s.destroy());
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('error', () => resolve(null));
    s.on('close', () => resolve(got));
  });
}

/** Runs HAProxy on the shipped file at `nofile` descriptors; `show info` once it serves, or its output if it exited. */
async function runAtLimit(nofile: number, extra: Readonly<Record<string, string>>): Promise<{ info: string | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-haproxy-limit-'));
  const socket = join(dir, 'admin.sock');
  const [a, b, c, d, e, f, g, h, i] = (await freePorts(9)) as number[];
  const env = haproxyEnv(
    [
      { host: '127.0.0.1', restPort: a!, mcpPort: b!, authPort: c! },
      { host: '127.0.0.1', restPort: d!, mcpPort: e!, authPort: f! },
    ],
    { rest: g!, mcp: h!, auth: i! },
    { HPD_LB_STATS_SOCKET: socket, ...extra },
  );
  const child = spawn('prlimit', [`--nofile=${nofile}:${nofile}`, HAPROXY, '-db', '-f', HAPROXY_CFG], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (x: Buffer) => (output += x.toString()));
  child.stderr.on('data', (x: Buffer) => (output += x.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(50)) {
      if (child.exitCode !== null || child.signalCode !== null) return { info: null, output };
      const info = await admin(socket, 'show info');
      if (info?.includes('Maxconn:') === true) return { info, output };
    }
    throw new Error(`haproxy neither served nor exited within 10 s: ${output}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

test(`the shipped config starts at a hard limit of ${LOW_NOFILE} descriptors, with a maxconn derived from it; an explicit HPD_LB_MAXCONN beyond it is refused with HAProxy's alert naming the limit`, async () => {
  const check = spawnSync('prlimit', [`--nofile=${LOW_NOFILE}:${LOW_NOFILE}`, HAPROXY, '-c', '-f', HAPROXY_CFG], {
    env: haproxyEnv(
      [
        { host: '127.0.0.1', restPort: 1, mcpPort: 2, authPort: 3 },
        { host: '127.0.0.1', restPort: 4, mcpPort: 5, authPort: 6 },
      ],
      { rest: 7, mcp: 8, auth: 9 },
    ),
    encoding: 'utf8',
  });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);

  const started = await runAtLimit(LOW_NOFILE, {});
  assert.notEqual(started.info, null, `haproxy did not start at ${LOW_NOFILE} descriptors: ${started.output}`);
  const maxconn = Number(/^Maxconn: (\d+)$/m.exec(started.info!)?.[1]);
  assert.ok(
    maxconn > 1000 && maxconn < LOW_NOFILE / 2,
    `maxconn ${maxconn}: about half the descriptors (each proxied connection takes two)`,
  );

  const refused = await runAtLimit(LOW_NOFILE, { HPD_LB_MAXCONN: '20000' });
  assert.equal(refused.info, null, 'a maxconn the descriptors cannot carry does not start');
  assert.match(refused.output, /Cannot raise FD limit to \d+, limit is 4096/);
});

test('the request log holds neither a ?api_key= query string nor an Authorization header: method, path and status only', {
  timeout: 60_000,
}, async (t) => {
  const { dir, key, restPort, mcpPort, authPort, env } = await prepareServe('hpd-lb-log-', { tier: 'pro', userId: 'user-lb-log' });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const served = await spawnServe(env);
  t.after(async () => {
    served.child.kill('SIGKILL');
    await served.exited;
  });
  // Both backend slots name the one instance: what is tested is what HAProxy writes.
  const instance = { host: '127.0.0.1', restPort, mcpPort, authPort };
  const lb = await startHaproxy([instance, instance]);
  t.after(() => lb.stop());
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    const up = (await lb.stats()).filter((s) => s.backend === 'be_rest' && s.status.startsWith('UP')).length;
    if (up === 2) break;
    assert.ok(Date.now() < deadline, 'the instance is UP in HAProxy');
  }
  const queryKey = (await fetch(`${lb.restUrl}/v1/health/years?api_key=${key}`)).status;
  const header = await fetch(`${lb.restUrl}/v1/health/plans?zip=77002&age=40&year=2025`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(header.status, 200);
  const token = await fetch(`${lb.authUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`client:${key}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  await token.arrayBuffer();
  let log = '';
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(50)) {
    log = lb.output();
    if (['"GET /v1/health/years HTTP/1.1"', '"GET /v1/health/plans HTTP/1.1"', '"POST /token HTTP/1.1"'].every((l) => log.includes(l)))
      break;
  }
  t.diagnostic(`the query-string key was answered ${queryKey}; log lines: ${log.split('\n').filter((l) => l.includes('HTTP/1.1')).length}`);
  assert.match(log, /fe_rest be_rest\/hpd[12] .* 200 .*"GET \/v1\/health\/plans HTTP\/1\.1"/, `a request line without its query: ${log}`);
  assert.match(log, /"GET \/v1\/health\/years HTTP\/1\.1"/, log);
  assert.match(log, /"POST \/token HTTP\/1\.1"/, log);
  assert.ok(!log.includes(key), `the API key is in HAProxy's log:\n${log}`);
  assert.ok(!log.includes(Buffer.from(`client:${key}`).toString('base64')), 'the Basic credentials are not logged');
  assert.doesNotMatch(log, /api_key|zip=|authorization|Bearer/i);
});
