/**
 * @module Debian's HAProxy for tests, running the real deploy/haproxy.cfg: the file is used as shipped,
 * only its environment variables differ (loopback frontends on free ports, the instances' ports, an admin
 * socket in a temporary directory, logs on stdout). HAProxy runs in the foreground (`-db`) as a child of
 * the test and is killed by stop().
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../bench/lib/processes.ts';

export const HAPROXY = '/usr/sbin/haproxy';
/** The configuration operators deploy. */
export const HAPROXY_CFG = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url));

/** One `hpd serve` instance as the load balancer sees it. */
export interface HaproxyBackend {
  readonly host: string;
  readonly restPort: number;
  readonly mcpPort: number;
  readonly authPort: number;
}

/** A server line of `show stat`: its backend (be_rest, be_mcp, be_auth), name (hpd1, hpd2) and state. */
export interface ServerStat {
  readonly backend: string;
  readonly server: string;
  /** UP, DOWN, NOLB, MAINT, "UP 1/2" (going down), "DOWN 1/2" (going up), no check… */
  readonly status: string;
  /** Cumulative sessions (connections) sent to this server. */
  readonly sessions: number;
  /** Responses by class, as HAProxy counted them for this server. */
  readonly responses2xx: number;
  readonly responses4xx: number;
  readonly responses5xx: number;
}

export interface TestHaproxy {
  /** Frontend origins: REST http://127.0.0.1:P, MCP http://127.0.0.1:P/mcp, authorization server http://127.0.0.1:P. */
  readonly restUrl: string;
  readonly mcpUrl: string;
  readonly authUrl: string;
  readonly ports: { readonly rest: number; readonly mcp: number; readonly auth: number };
  /** Server states and counters from `show stat` on the admin socket. */
  stats(): Promise<ServerStat[]>;
  /** One command on the admin socket (e.g. `set server be_rest/hpd1 state drain`); its answer. */
  command(line: string): Promise<string>;
  /** What HAProxy wrote (its logs go to stdout here). */
  output(): string;
  /** Kills HAProxy and removes its directory. */
  stop(): Promise<void>;
}

/** The environment deploy/haproxy.cfg reads, for these backends and frontend ports (nothing inherited). */
export function haproxyEnv(
  backends: readonly HaproxyBackend[],
  ports: { rest: number; mcp: number; auth: number },
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  if (backends.length !== 2) throw new Error(`deploy/haproxy.cfg names two instances; got ${backends.length}`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    HPD_LB_BIND_ADDR: '127.0.0.1',
    HPD_LB_REST_PORT: String(ports.rest),
    HPD_LB_MCP_PORT: String(ports.mcp),
    HPD_LB_AUTH_PORT: String(ports.auth),
    HPD_LB_LOG: 'stdout',
    ...extra,
  };
  backends.forEach((b, i) => {
    env[`HPD_BACKEND_${i + 1}_HOST`] = b.host;
    env[`HPD_BACKEND_${i + 1}_REST_PORT`] = String(b.restPort);
    env[`HPD_BACKEND_${i + 1}_MCP_PORT`] = String(b.mcpPort);
    env[`HPD_BACKEND_${i + 1}_AUTH_PORT`] = String(b.authPort);
  });
  return env;
}

/** `haproxy -c` on deploy/haproxy.cfg with this environment: exit status and output. */
export function checkHaproxyConfig(env: Readonly<Record<string, string>>): { status: number | null; output: string } {
  const r = spawnSync(HAPROXY, ['-c', '-f', HAPROXY_CFG], { env, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * Starts HAProxy on free loopback ports (or `opts.ports`) in front of `backends`; resolves once the
 * three frontends and the admin socket accept connections. The instances need not be up yet: their
 * health checks bring them in as they start.
 */
export async function startHaproxy(
  backends: readonly HaproxyBackend[],
  opts: { ports?: { rest: number; mcp: number; auth: number }; env?: Readonly<Record<string, string>> } = {},
): Promise<TestHaproxy> {
  const [rest, mcp, auth] =
    opts.ports !== undefined ? [opts.ports.rest, opts.ports.mcp, opts.ports.auth] : ((await freePorts(3)) as [number, number, number]);
  const ports = { rest: rest!, mcp: mcp!, auth: auth! };
  const dir = mkdtempSync(join(tmpdir(), 'hpd-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const env = haproxyEnv(backends, ports, { ...opts.env, HPD_LB_STATS_SOCKET: socket });
  const check = checkHaproxyConfig(env);
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`haproxy -c refused deploy/haproxy.cfg: ${check.output}`);
  }
  // -db: stay in the foreground, so this child is HAProxy itself and killing it ends it.
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', HAPROXY_CFG], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer): void => {
    output = (output + d.toString()).slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const command = (line: string): Promise<string> => adminCommand(socket, line);
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`haproxy exited (${child.exitCode ?? child.signalCode}): ${output}`);
      if (Date.now() > deadline) throw new Error(`haproxy not listening after 10 s: ${output}`);
      const up = await Promise.all([
        accepts(ports.rest),
        accepts(ports.mcp),
        accepts(ports.auth),
        command('show info').then(
          () => true,
          () => false,
        ),
      ]);
      if (up.every(Boolean)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    restUrl: `http://127.0.0.1:${ports.rest}`,
    mcpUrl: `http://127.0.0.1:${ports.mcp}/mcp`,
    authUrl: `http://127.0.0.1:${ports.auth}`,
    ports,
    async stats() {
      return parseShowStat(await command('show stat'));
    },
    command,
    output: () => output,
    stop,
  };
}

/** Server rows of `show stat` CSV (frontend and backend summary rows left out). */
export function parseShowStat(csv: string): ServerStat[] {
  const lines = csv.split('\n').filter((l) => l.trim() !== '');
  const header = lines.shift();
  if (header === undefined || !header.startsWith('# ')) throw new Error(`not a show stat answer: ${csv.slice(0, 200)}`);
  const cols = header.slice(2).split(',');
  const at = (name: string): number => {
    const i = cols.indexOf(name);
    if (i < 0) throw new Error(`show stat has no column ${name}`);
    return i;
  };
  const [px, sv, status, stot, h2, h4, h5] = [
    at('pxname'),
    at('svname'),
    at('status'),
    at('stot'),
    at('hrsp_2xx'),
    at('hrsp_4xx'),
    at('hrsp_5xx'),
  ];
  return lines
    .map((l) => l.split(','))
    .filter((f) => f[sv] !== 'FRONTEND' && f[sv] !== 'BACKEND')
    .map((f) => ({
      backend: f[px]!,
      server: f[sv]!,
      status: f[status]!,
      sessions: Number(f[stot]),
      responses2xx: Number(f[h2] || 0),
      responses4xx: Number(f[h4] || 0),
      responses5xx: Number(f[h5] || 0),
    }));
}

/** Sends one line to the admin socket and returns everything it answers before closing. */
function adminCommand(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let got = '';
    s.setTimeout(2000, () => s.destroy(new Error(`admin socket: no answer to "${line}"`)));
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(got));
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}
