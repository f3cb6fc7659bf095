/**
 * deploy/haproxy.cfg as shipped, run by Debian's HAProxy in front of two real `hpd serve` instances
 * (REST in the main thread, each with its own copy of the fixture build and of one state directory, so
 * the same API key works on both; no Redis: what is tested is the load balancer, not shared state).
 *
 * Which instance answered: in production both instances set HPD_BASE_URL to the load balancer's URL;
 * here each gets its own host name (http://hpd1.lb.test, http://hpd2.lb.test) as a marker, visible in the
 * `type` of a problem document. MCP sessions are attributed by asking each instance directly: only the
 * instance holding a session answers 200 for it, the other 404.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from '../../bench/lib/processes.ts';
import { checkHaproxyConfig, haproxyEnv, startHaproxy, type ServerStat, type TestHaproxy } from '../helpers/haproxy.ts';
import { prepareServe, spawnServe, type ServeChild } from '../helpers/serve-fixture.ts';

const MARKERS = ['http://hpd1.lb.test', 'http://hpd2.lb.test'] as const;
const PROTOCOL = '2025-11-25';

test('haproxy -c accepts deploy/haproxy.cfg with its variables set (plain, and with TLS, admin socket, stats port, user), refuses it without the instances', async (t) => {
  const [a, b, c, d, e, f, g, h, i] = await freePorts(9);
  const backends = [
    { host: '10.0.0.1', restPort: a!, mcpPort: b!, authPort: c! },
    { host: '10.0.0.2', restPort: d!, mcpPort: e!, authPort: f! },
  ];
  const ports = { rest: g!, mcp: h!, auth: i! };
  const plain = checkHaproxyConfig(haproxyEnv(backends, ports));
  assert.equal(plain.status, 0, plain.output);
  assert.match(plain.output, /Configuration file is valid/);

  // Every optional block parses too: a throwaway self-signed certificate for the TLS binds.
  const dir = mkdtempSync(join(tmpdir(), 'hpd-haproxy-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pem = join(dir, 'lb.pem');
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const ssl = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=lb.test'],
    { encoding: 'utf8' },
  );
  assert.equal(ssl.status, 0, ssl.stderr);
  writeFileSync(pem, readFileSync(cert, 'utf8') + readFileSync(key, 'utf8'));
  const full = checkHaproxyConfig(
    haproxyEnv(backends, ports, {
      HPD_LB_TLS_CERT: pem,
      HPD_LB_STATS_SOCKET: join(dir, 'admin.sock'),
      HPD_LB_STATS_PORT: String(ports.rest + 1),
      HPD_LB_USER: 'nobody',
      HPD_LB_GROUP: 'nogroup',
      HPD_LB_LOG: 'syslog',
    }),
  );
  assert.equal(full.status, 0, full.output);

  const env = haproxyEnv(backends, ports);
  delete env.HPD_BACKEND_2_HOST;
  const missing = checkHaproxyConfig(env);
  assert.notEqual(missing.status, 0, 'an unset instance address is an error, not an empty address');
  assert.match(missing.output, /HPD_BACKEND_1_HOST and HPD_BACKEND_2_HOST must name the hpd instances/);
});

interface Instance {
  readonly name: 'hpd1' | 'hpd2';
  readonly marker: string;
  readonly dir: string;
  readonly restPort: number;
  readonly mcpPort: number;
  readonly authPort: number;
  served: ServeChild | null;
}

describe('HAProxy (deploy/haproxy.cfg) in front of two hpd serve instances', { timeout: 90_000 }, () => {
  let lb: TestHaproxy;
  let key: string;
  const instances: Instance[] = [];

  before(async () => {
    const first = await prepareServe('hpd-lb-', { tier: 'enterprise', userId: 'user-lb' }, { HPD_WORKERS: '0', HPD_DRAIN_SECONDS: '1' });
    key = first.key;
    // The second host: its own copy of the build (verbatim relative `current` link) and of the state.
    const secondDir = mkdtempSync(join(tmpdir(), 'hpd-lb2-'));
    cpSync(first.dir, secondDir, { recursive: true, verbatimSymlinks: true });
    const [r2, m2, a2] = (await freePorts(3)) as [number, number, number];
    instances.push(
      {
        name: 'hpd1',
        marker: MARKERS[0],
        dir: first.dir,
        restPort: first.restPort,
        mcpPort: first.mcpPort,
        authPort: first.authPort,
        served: null,
      },
      { name: 'hpd2', marker: MARKERS[1], dir: secondDir, restPort: r2, mcpPort: m2, authPort: a2, served: null },
    );
    lb = await startHaproxy(instances.map((i) => ({ host: '127.0.0.1', restPort: i.restPort, mcpPort: i.mcpPort, authPort: i.authPort })));
    await Promise.all(
      instances.map(async (i) => {
        i.served = await spawnServe({
          ...first.env,
          HPD_DATA_DIR: join(i.dir, 'builds'),
          HPD_STATE_DIR: join(i.dir, 'state'),
          HPD_PORT: String(i.restPort),
          HPD_MCP_PORT: String(i.mcpPort),
          HPD_AUTH_PORT: String(i.authPort),
          // The public URLs are the load balancer's (the REST one carries the instance marker, see top).
          HPD_BASE_URL: i.marker,
          HPD_MCP_URL: lb.mcpUrl,
          HPD_AUTH_URL: lb.authUrl,
          HPD_TRUSTED_PROXIES: '127.0.0.1',
        });
      }),
    );
    await until(
      async () => (await lb.stats()).every((s) => s.status === 'UP'),
      10_000,
      async () => `instances not UP behind HAProxy: ${JSON.stringify(await lb.stats())}`,
    );
  });

  after(async () => {
    for (const i of instances) {
      const c = i.served?.child;
      if (c !== undefined && c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await i.served!.exited;
      }
    }
    await lb?.stop();
    for (const i of instances) rmSync(i.dir, { recursive: true, force: true });
  });

  /** One REST request through the load balancer without a key: the 401's problem type names the instance. */
  const whoAnswersRest = async (): Promise<string> => {
    const r = await fetch(`${lb.restUrl}/v1/health/years`);
    const body = (await r.json()) as { type?: string };
    assert.equal(r.status, 401, JSON.stringify(body));
    const marker = MARKERS.find((m) => body.type?.startsWith(`${m}/`));
    assert.ok(marker !== undefined, `problem type ${body.type} names an instance`);
    return marker;
  };

  const mcpPost = async (
    url: string,
    message: object,
    sessionId?: string,
  ): Promise<{
    status: number;
    sessionId: string | null;
    body: { result?: { tools?: unknown[]; protocolVersion?: string }; error?: unknown } | null;
  }> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
    };
    if (sessionId !== undefined) Object.assign(headers, { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL });
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
    const text = await r.text();
    // A JSON-RPC answer comes as JSON or as one server-sent event.
    const data = (r.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5))
          .join('')
      : text;
    return { status: r.status, sessionId: r.headers.get('mcp-session-id'), body: data.trim() === '' ? null : JSON.parse(data) };
  };
  const initialize = async (url: string): Promise<string> => {
    const r = await mcpPost(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'lb-test', version: '1' } },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.sessionId, 'initialize returns an Mcp-Session-Id');
    const ack = await mcpPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, r.sessionId);
    assert.equal(ack.status, 202);
    return r.sessionId;
  };
  const toolsList = (url: string, sessionId: string, id: number) => mcpPost(url, { jsonrpc: '2.0', id, method: 'tools/list' }, sessionId);
  /** Which instance holds a session, asked directly: exactly one must know it. */
  const ownerOf = async (sessionId: string): Promise<string> => {
    const statuses = await Promise.all(
      instances.map(async (i) => (await toolsList(`http://127.0.0.1:${i.mcpPort}/mcp`, sessionId, 99)).status),
    );
    const owners = instances.filter((_, n) => statuses[n] === 200);
    assert.equal(owners.length, 1, `one instance holds session ${sessionId} (direct statuses ${statuses.join(', ')})`);
    assert.ok(
      statuses.every((s) => s === 200 || s === 404),
      statuses.join(', '),
    );
    return owners[0]!.name;
  };
  const server = (stats: readonly ServerStat[], backend: string, name: string): ServerStat => {
    const s = stats.find((x) => x.backend === backend && x.server === name);
    assert.ok(s !== undefined, `${backend}/${name} in show stat`);
    return s;
  };

  test('REST, MCP and authorization frontends reach both instances; health checks on /readyz keep all six servers UP', async () => {
    const seen = new Map<string, number>();
    for (let n = 0; n < 20; n++) {
      const m = await whoAnswersRest();
      seen.set(m, (seen.get(m) ?? 0) + 1);
    }
    assert.deepEqual([...seen.keys()].sort(), [...MARKERS], `both instances answered: ${JSON.stringify([...seen])}`);
    for (const m of MARKERS) assert.ok(seen.get(m)! >= 8, `round robin spreads evenly: ${JSON.stringify([...seen])}`);
    // With the key (each instance has a copy of the same state), data requests succeed through the balancer.
    for (let n = 0; n < 4; n++) {
      const r = await fetch(`${lb.restUrl}/v1/health/years`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(r.status, 200, await r.text());
      await r.arrayBuffer().catch(() => undefined);
    }

    const before = await lb.stats();
    for (let n = 0; n < 6; n++) {
      const r = await fetch(`${lb.authUrl}/.well-known/openid-configuration`);
      assert.equal(r.status, 200);
      assert.equal(((await r.json()) as { issuer: string }).issuer, lb.authUrl, 'the issuer is the balancer, whichever instance answers');
    }
    const owners = new Set<string>();
    for (let n = 0; n < 6; n++) owners.add(await ownerOf(await initialize(lb.mcpUrl)));
    assert.deepEqual([...owners].sort(), ['hpd1', 'hpd2'], 'new MCP sessions are balanced over both instances');
    const afterStats = await lb.stats();
    for (const name of ['hpd1', 'hpd2']) {
      assert.ok(server(afterStats, 'be_auth', name).responses2xx > server(before, 'be_auth', name).responses2xx, `be_auth/${name} served`);
      for (const backend of ['be_rest', 'be_mcp', 'be_auth'])
        assert.equal(server(afterStats, backend, name).status, 'UP', `${backend}/${name}`);
    }
  });

  test('MCP stickiness on Mcp-Session-Id: 20 follow-ups land on the instance holding the session while new sessions and REST requests alternate', async () => {
    const sid = await initialize(lb.mcpUrl);
    const owner = await ownerOf(sid);
    const restSeen = new Set<string>();
    const newOwners = new Set<string>();
    const before = server(await lb.stats(), 'be_mcp', owner).responses2xx;
    for (let n = 0; n < 20; n++) {
      const r = await toolsList(lb.mcpUrl, sid, 100 + n);
      assert.equal(
        r.status,
        200,
        `follow-up ${n} through HAProxy reached the session's instance (a 404 means it went to the other one): ${JSON.stringify(r.body)}`,
      );
      assert.equal(r.body?.result?.tools?.length, 13);
      // Between follow-ups, balanced traffic: a new session each time, and a plain REST request.
      newOwners.add(await ownerOf(await initialize(lb.mcpUrl)));
      restSeen.add(await whoAnswersRest());
    }
    assert.equal(newOwners.size, 2, 'sessions without the header are still balanced over both instances');
    assert.equal(restSeen.size, 2, 'REST requests alternate over both instances');
    // HAProxy's own count agrees: the owner served at least the 20 follow-ups.
    assert.ok(server(await lb.stats(), 'be_mcp', owner).responses2xx - before >= 20);
  });

  test('kill -9 of one instance: HAProxy marks it DOWN in all three backends within ~2 s, requests keep succeeding on the survivor', async () => {
    const [survivor, victim] = instances as [Instance, Instance];
    // A session pinned to the victim, to see what happens to it afterwards.
    let victimSession: string | undefined;
    for (let n = 0; n < 6 && victimSession === undefined; n++) {
      const sid = await initialize(lb.mcpUrl);
      if ((await ownerOf(sid)) === victim.name) victimSession = sid;
    }
    assert.ok(victimSession !== undefined, 'a session landed on the victim');

    // Two clients sending REST requests back to back the whole time.
    interface Outcome {
      readonly started: number;
      readonly ended: number;
      readonly marker?: string;
      readonly error?: string;
    }
    const outcomes: Outcome[] = [];
    let running = true;
    const client = async (): Promise<void> => {
      while (running) {
        const started = Date.now();
        try {
          const r = await fetch(`${lb.restUrl}/v1/health/years`, { signal: AbortSignal.timeout(5000) });
          const body = (await r.json()) as { type?: string };
          const marker = r.status === 401 ? MARKERS.find((m) => body.type?.startsWith(`${m}/`)) : undefined;
          outcomes.push(
            marker !== undefined ? { started, ended: Date.now(), marker } : { started, ended: Date.now(), error: `status ${r.status}` },
          );
        } catch (err) {
          outcomes.push({ started, ended: Date.now(), error: `${String(err)} ${String((err as { cause?: unknown }).cause ?? '')}` });
        }
      }
    };
    const clients = [client(), client()];
    let killedAt = 0;
    let exitedAt = 0;
    let downAt = 0;
    try {
      await sleep(300);
      killedAt = Date.now();
      victim.served!.child.kill('SIGKILL');
      await victim.served!.exited;
      exitedAt = Date.now();
      await until(
        async () => {
          const s = await lb.stats();
          if (['be_rest', 'be_mcp', 'be_auth'].every((b) => server(s, b, victim.name).status.startsWith('DOWN'))) downAt = Date.now();
          return downAt > 0;
        },
        5000,
        async () => `victim still routed 5 s after the kill: ${JSON.stringify(await lb.stats())}`,
      );
      await sleep(500);
    } finally {
      running = false;
      await Promise.all(clients);
    }

    const detection = downAt - killedAt;
    process.stderr.write(
      `# HAProxy marked the killed instance DOWN ${detection} ms after kill -9; ${outcomes.length} requests during the test\n`,
    );
    assert.ok(detection <= 2500, `marked down ${detection} ms after the kill`);
    const s = await lb.stats();
    for (const b of ['be_rest', 'be_mcp', 'be_auth'])
      assert.equal(server(s, b, survivor.name).status, 'UP', `${b}/${survivor.name} stays UP`);

    // Only requests sent while the instance was dying may fail (they reached it: HAProxy must not replay
    // them); every request started after the process was gone succeeded (a connection refused by the
    // dead instance is retried on the survivor).
    const failedAfter = outcomes.filter((o) => o.started >= exitedAt && o.error !== undefined);
    assert.deepEqual(
      failedAfter,
      [],
      `no request started after the kill failed (kill ${killedAt}, exit ${exitedAt}, down ${downAt})\n${lb
        .output()
        .split('\n')
        .filter((l) => !/ 401 /.test(l))
        .slice(-30)
        .join('\n')}`,
    );
    const failedAtKill = outcomes.filter((o) => o.started < exitedAt && o.ended >= killedAt && o.error !== undefined);
    assert.deepEqual(
      outcomes.filter((o) => o.ended < killedAt && o.error !== undefined),
      [],
      'nothing failed before the kill',
    );
    process.stderr.write(
      `# ${failedAtKill.length} requests sent while the instance was dying (${exitedAt - killedAt} ms from SIGKILL to exit) failed; 0 after\n`,
    );
    const afterExit = outcomes.filter((o) => o.started >= exitedAt);
    assert.ok(afterExit.length >= 10, `requests kept flowing (${afterExit.length})`);
    assert.ok(
      afterExit.every((o) => o.marker === survivor.marker),
      'every request after the kill was served by the survivor',
    );
    assert.ok(
      outcomes.some((o) => o.started < killedAt && o.marker === victim.marker),
      'the victim served requests before the kill',
    );

    // MCP: new sessions work through the survivor; the victim's session id now reaches the survivor,
    // which does not know it (404: the client initializes again, as the MCP spec says).
    const fresh = await initialize(lb.mcpUrl);
    assert.equal((await toolsList(lb.mcpUrl, fresh, 7)).status, 200);
    assert.equal((await toolsList(lb.mcpUrl, victimSession, 8)).status, 404);
  });
});

async function until(condition: () => Promise<boolean>, ms: number, message: () => Promise<string>): Promise<void> {
  for (const deadline = Date.now() + ms; ; ) {
    if (await condition()) return;
    if (Date.now() > deadline) assert.fail(await message());
    await sleep(50);
  }
}
