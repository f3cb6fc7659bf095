/**
 * @module A real Debian `redis-server` for tests and benchmarks: started on a free loopback port with its
 * own temporary directory, stopped and restarted on the same port by the outage tests, removed afterwards.
 * Tests keep an append-only file (a stop and restart keeps the data, as a production Redis would); the
 * benchmark turns persistence off so disk writes do not enter its figures. A new server gets hpd's
 * epoch as an operator's `hpd redis init` gives it (no hpd process creates one), unless asked not to.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { initRedisEpoch } from '../../src/policy/redis-epoch.ts';
import { freePorts } from './processes.ts';

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface TestRedis {
  readonly port: number;
  /** The running server's process id (for CPU accounting), or null while stopped. */
  pid(): number | null;
  /** redis://127.0.0.1:PORT/0 */
  readonly url: string;
  /** Its working directory (append-only file), removed by close(). */
  readonly dir: string;
  /** Stops the server (SIGTERM: it writes its data first); resolves once the process ended. */
  stop(): Promise<void>;
  /** SIGKILL: no chance to write anything. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

export interface TestRedisOptions {
  /** false: no persistence (restarts lose everything). Default: an append-only file. */
  readonly persistent?: boolean;
  /**
   * false: leave it without hpd's epoch (a deployment before `hpd redis init`). Default: initialised,
   * except on a replica (`--replicaof` in `args`), which gets its primary's.
   */
  readonly epoch?: boolean;
  /** More command-line settings (e.g. `--replicaof HOST PORT`, `--requirepass P`). */
  readonly args?: readonly string[];
}

export async function startTestRedis(opts: TestRedisOptions = {}): Promise<TestRedis> {
  const persistence = opts.persistent === false ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'always'];
  const [port] = (await freePorts(1)) as [number];
  const dir = mkdtempSync(join(tmpdir(), 'hpd-redis-'));
  let child: ChildProcess | null = null;
  let log = '';
  const start = async (): Promise<void> => {
    log = '';
    const c = spawn(
      REDIS_SERVER,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        ...persistence,
        '--save',
        '',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
        // DEBUG SLEEP stalls it in the tests of a slow Redis (allowed from loopback only).
        '--enable-debug-command',
        'local',
        ...(opts.args ?? []),
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    c.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    child = c;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (c.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on ${port}: ${log.trim()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    child = null;
    if (c === null || c.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill(signal);
    await gone;
  };
  await start();
  const url = `redis://127.0.0.1:${port}/0`;
  const args = opts.args ?? [];
  if (opts.epoch !== false && !args.includes('--replicaof')) {
    const passwordAt = args.indexOf('--requirepass');
    const password = passwordAt < 0 ? undefined : args[passwordAt + 1];
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, password });
    try {
      await client.connect();
      await initRedisEpoch(client);
    } catch (err) {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
      throw err;
    } finally {
      client.disconnect();
    }
  }
  return {
    port,
    url,
    dir,
    pid: () => child?.pid ?? null,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    start,
    async close() {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis on `port` answers PING with +PONG or -NOAUTH (a loading Redis answers -LOADING). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.setTimeout(500, () => {
      s.destroy();
      resolve(false);
    });
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) {
        s.destroy();
        // A server with requirepass answers NOAUTH: up as well.
        resolve(got.startsWith('+PONG') || got.startsWith('-NOAUTH'));
      }
    });
    s.on('error', () => resolve(false));
  });
}
