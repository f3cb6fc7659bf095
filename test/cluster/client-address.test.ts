/**
 * The real client address behind the shipped HAProxy (deploy/haproxy.cfg, PROXY protocol v2) on two
 * `hpd serve` instances sharing a Redis: clients on distinct loopback addresses (127.0.0.2, .3, …; all
 * of 127/8 is loopback on Linux) are told apart by every per-address rule — log-in back-off, client
 * registration, the REST connection limit — and a client talking to an instance directly cannot name
 * an address of its choice.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pkcePair, REDIRECT_URI } from '../auth-server/oauth-test-client.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

const A = '127.0.0.2';
const B = '127.0.0.3';
const C = '127.0.0.4';
const D = '127.0.0.5';
const E = '127.0.0.6';
const F = '127.0.0.7';
/** HAProxy's per-source limits on fe_mcp and fe_auth, lowered for the test (defaults 500, 300). */
const LB_MCP_CONNECTIONS = 5;
const LB_AUTH_REQUESTS = 80;
const PASSWORD = 'correct horse battery staple';
/** Per instance; HAProxy deals connections to the two instances in turn. */
const REST_PER_ADDRESS = 3;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTP request from `localAddress` (a fresh connection unless `agent` keeps one). */
function send(
  url: string,
  opts: { localAddress: string; method?: string; headers?: Record<string, string>; body?: string; agent?: Agent },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(opts.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(opts.body)) }) },
        ...(opts.agent === undefined ? { localAddress: opts.localAddress, agent: false } : { agent: opts.agent }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A browser on one address: keeps cookies, never follows redirects. */
class Browser {
  readonly #cookies = new Map<string, string>();
  readonly address: string;
  constructor(address: string) {
    this.address = address;
  }

  async go(url: string, form?: Record<string, string>): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.#cookies.size > 0) headers.cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const body = form === undefined ? undefined : new URLSearchParams(form).toString();
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const answer = await send(url, { localAddress: this.address, method: body === undefined ? 'GET' : 'POST', headers, body });
    for (const line of answer.headers['set-cookie'] ?? []) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return answer;
  }
}

/** POST /reg from `address`, as MCP SDK clients register. */
function register(issuer: string, address: string): Promise<Answer> {
  return send(`${issuer}/reg`, {
    localAddress: address,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'client-address test',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
}

/** Registers a client and opens an authorization: the interaction page's URL. */
async function openInteraction(c: TestCluster, browser: Browser): Promise<string> {
  const issuer = c.lb.authUrl;
  const reg = await register(issuer, browser.address);
  assert.equal(reg.status, 201, reg.body);
  const clientId = (JSON.parse(reg.body) as { client_id: string }).client_id;
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: 'st',
    scope: 'openid offline_access',
    resource: c.lb.mcpUrl,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  const auth = await browser.go(`${issuer}/auth?${q}`);
  assert.ok(auth.status === 303 || auth.status === 302, `authorization answered ${auth.status}: ${auth.body.slice(0, 300)}`);
  const url = new URL(String(auth.headers.location), issuer).href;
  const page = await browser.go(url);
  assert.equal(page.status, 200);
  return url;
}

/** Follows redirects until the client's callback (true) or a page that is not a redirect (its answer). */
async function followToCallback(browser: Browser, first: Answer, issuer: string): Promise<true | Answer> {
  let current = first;
  for (let hops = 0; hops < 10; hops++) {
    if (current.status < 300 || current.status >= 400) return current;
    const next = new URL(String(current.headers.location), issuer).href;
    if (next.startsWith(REDIRECT_URI)) return true;
    current = await browser.go(next);
  }
  throw new Error('too many redirects');
}

describe('the client address behind HAProxy', { timeout: 120_000 }, () => {
  let c: TestCluster;
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;

  before(async () => {
    c = await startCluster(
      { HPD_REST_MAX_CONNECTIONS_PER_ADDRESS: String(REST_PER_ADDRESS) },
      { lbEnv: { HPD_LB_MCP_MAXCONN_PER_SRC: String(LB_MCP_CONNECTIONS), HPD_LB_AUTH_REQ_RATE_PER_SRC: String(LB_AUTH_REQUESTS) } },
    );
  });
  after(() => c?.close());

  test("12 failed log-ins from one client throttle that client, not another one's correct log-in", async () => {
    const issuer = c.lb.authUrl;
    // B has an account.
    const owner = new Browser(B);
    const signup = await owner.go(`${await openInteraction(c, owner)}/signup`, { email, password: PASSWORD, confirm: PASSWORD });
    assert.equal(await followToCallback(owner, signup, issuer), true, 'B signed up');

    // A fails 12 log-ins (a new address each time, so only A's address accumulates failures), waiting out
    // the back-off that starts after the tenth: A is then refused for 4 s.
    const attacker = new Browser(A);
    const form = await openInteraction(c, attacker);
    let failures = 0;
    while (failures < 12) {
      const r = await attacker.go(`${form}/login`, { email: `nobody-${failures}@example.com`, password: 'wrong password 123' });
      if (r.status === 429) await sleep(Number(r.headers['retry-after']) * 1000 + 50);
      else {
        assert.match(r.body, /Wrong e-mail address or password\./);
        failures++;
      }
    }

    // Within those 4 s: B's correct log-in goes through, and A is still refused.
    const other = new Browser(B);
    const login = await other.go(`${await openInteraction(c, other)}/login`, { email, password: PASSWORD });
    const reached = await followToCallback(other, login, issuer);
    assert.equal(reached, true, `B's log-in was refused: ${reached === true ? '' : `${reached.status} ${reached.body.slice(0, 300)}`}`);
    const again = await attacker.go(`${form}/login`, { email: 'nobody-13@example.com', password: 'wrong password 123' });
    assert.equal(again.status, 429, 'A is still throttled');
  });

  test("one client's registrations used up leave another client's registration open", async () => {
    const issuer = c.lb.authUrl;
    // Each instance gives an address 20 an hour (registration-limit.ts); HAProxy alternates between them.
    let refusedInARow = 0;
    for (let n = 0; n < 60 && refusedInARow < 2; n++) {
      const r = await register(issuer, D);
      refusedInARow = r.status === 429 ? refusedInARow + 1 : 0;
      if (r.status !== 429) assert.equal(r.status, 201, r.body);
    }
    assert.equal(refusedInARow, 2, 'D used up its registrations on both instances');
    const other = await register(issuer, C);
    assert.equal(other.status, 201, `C's registration: ${other.status} ${other.body}`);
    assert.equal((await register(issuer, D)).status, 429, 'D is still refused');
  });

  test('a client talking to an instance directly cannot name another address in a PROXY header', async () => {
    const inst = c.instances[0];
    const port = Number(new URL(inst.authUrl).port);
    // A PROXY v2 header naming 198.51.100.7, then a registration, from an address not in HPD_TRUSTED_PROXIES.
    const header = Buffer.concat([
      Buffer.from('0d0a0d0a000d0a515549540a21110c00', 'hex'),
      Buffer.from([198, 51, 100, 7, 127, 0, 0, 1, 0x30, 0x39, 0x1f, 0x90]),
    ]);
    const body = '{"redirect_uris":["http://127.0.0.1:53682/callback"],"token_endpoint_auth_method":"none"}';
    const http = `POST /reg HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect({ port, host: '127.0.0.1', localAddress: D });
      let got = '';
      s.on('data', (d: Buffer) => (got += d.toString('latin1')));
      s.on('error', reject);
      s.on('close', () => resolve(got));
      s.on('connect', () => s.write(Buffer.concat([header, Buffer.from(http)])));
      setTimeout(() => s.destroy(), 5000).unref();
    });
    assert.match(answer, /^HTTP\/1\.1 400 /, 'the header is not HTTP from this peer');
    assert.doesNotMatch(answer, /client_id/);
    // D's own address is still the one refused (previous test), header or not.
    assert.equal((await register(inst.authUrl, D)).status, 429);
  });

  test('the REST per-address connection limit counts each client behind HAProxy, not HAProxy', async () => {
    const keep = (address: string): Agent => new Agent({ keepAlive: true, localAddress: address, maxSockets: 100 });
    const agents: Agent[] = [];
    const agentB = keep(B);
    try {
      // A opens 12 connections at once, each making a request: HAProxy deals them to the two instances,
      // each serves A on 3 at a time and answers the rest with a problem. An instance counts the
      // connections HAProxy holds to it for A, and HAProxy closes or reuses a server connection once
      // its answer is sent: on a busy machine the 12 can arrive spread out enough that no instance
      // ever holds more than 3 of them (sent one after another, they always do). So A tries up to 8
      // bursts, each on new connections, and one of them must be refused; how many varies, not that
      // some are. Each burst comes from an address of its own (A, then 127.0.1.x): the kept-alive
      // connections of an earlier burst would otherwise still hold some of A's slots on an instance.
      let answers: Answer[] = [];
      for (let burst = 0; burst < 8; burst++) {
        const from = burst === 0 ? A : `127.0.1.${burst}`;
        const agentA = keep(from);
        agents.push(agentA);
        answers = await Promise.all(
          Array.from({ length: 12 }, () => send(`${c.lb.restUrl}/healthz`, { localAddress: from, agent: agentA })),
        );
        if (answers.some((a) => a.status === 429)) break;
      }
      const seen = JSON.stringify(answers.map((a) => [a.status, a.body.slice(0, 80)]));
      const refused = answers.filter((a) => a.status === 429);
      assert.ok(refused.length >= 1, `A was never refused in 8 bursts; the last: ${seen}`);
      assert.ok(answers.filter((a) => a.status === 200).length >= 6, `A has 3 connections on each instance: ${seen}`);
      assert.ok(
        answers.every((a) => a.status === 200 || a.status === 429),
        `nothing but answers from the instances (HAProxy's own connections are never refused): ${seen}`,
      );
      for (const r of refused) {
        assert.equal(r.headers['content-type'], 'application/problem+json');
        assert.match(r.body, /HPD_REST_MAX_CONNECTIONS_PER_ADDRESS/);
      }
      // B is served by both instances while A holds its connections.
      for (let n = 0; n < 4; n++) {
        const b = await send(`${c.lb.restUrl}/healthz`, { localAddress: B, agent: agentB });
        assert.equal(b.status, 200, `B's request ${n}: ${b.status} ${b.body}`);
      }
    } finally {
      for (const a of agents) a.destroy();
      agentB.destroy();
    }
  });

  test('HAProxy limits each source on the MCP and auth frontends, not everybody', async () => {
    // E holds LB_MCP_CONNECTIONS idle connections to fe_mcp: its next one is closed at once, F's is served.
    const idle = await Promise.all(
      Array.from(
        { length: LB_MCP_CONNECTIONS },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve, reject) => {
            const s = connect({ port: c.lb.ports.mcp, host: '127.0.0.1', localAddress: E }, () => resolve(s));
            s.on('error', reject);
          }),
      ),
    );
    try {
      await sleep(100);
      const mcpHealth = c.lb.mcpUrl.replace(/\/mcp$/, '/healthz');
      await assert.rejects(send(mcpHealth, { localAddress: E }), /socket hang up|ECONNRESET/);
      assert.equal((await send(mcpHealth, { localAddress: F })).status, 200);
    } finally {
      for (const s of idle) s.destroy();
    }
    // E sends more than LB_AUTH_REQUESTS requests to fe_auth within 10 s: the excess is answered 429 by
    // HAProxy; F is served meanwhile.
    const discovery = `${c.lb.authUrl}/.well-known/openid-configuration`;
    const statuses: number[] = [];
    for (let n = 0; n < LB_AUTH_REQUESTS + 5; n++) statuses.push((await send(discovery, { localAddress: E })).status);
    assert.deepEqual(statuses.slice(0, LB_AUTH_REQUESTS), Array(LB_AUTH_REQUESTS).fill(200));
    assert.deepEqual(statuses.slice(LB_AUTH_REQUESTS), Array(5).fill(429));
    assert.equal((await send(discovery, { localAddress: F })).status, 200);
  });
});
