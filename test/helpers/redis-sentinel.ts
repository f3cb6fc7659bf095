/**
 * @module A real Redis Sentinel deployment on loopback, as test/cluster/sentinel-failover.test.ts needs
 * it: Debian's redis-server as primary and one replica (append-only files, each in its own temporary
 * directory) and three Debian redis-sentinel processes (quorum 2) watching them, all on free ports.
 * Resolves once every sentinel knows the replica and the two other sentinels, so a failover can
 * happen from the first second of a test. close() stops every process it started and removes the
 * directories.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startTestRedis, type TestRedis } from './redis-server.ts';
import { freePorts } from './services.ts';

export const REDIS_SENTINEL = '/usr/bin/redis-sentinel';
export const MASTER_NAME = 'hpd';
/** How long the sentinels wait before they call a silent primary down (subjectively). */
export const DOWN_AFTER_MS = 2000;
const FAILOVER_TIMEOUT_MS = 10_000;

/** A quiet, not yet connected client of one sentinel (its failures are the caller's to handle). */
function sentinelClient(port: number, password: string | undefined, retryStrategy?: () => null): Redis {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    password,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 500,
    retryStrategy,
  });
  r.on('error', () => {});
  return r;
}

export interface TestSentinelRedis {
  /** redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/hpd/0 */
  readonly url: string;
  /** The primary at start, then the replica. */
  readonly servers: readonly [TestRedis, TestRedis];
  readonly sentinelPorts: readonly number[];
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  /** Resolves once the sentinels name a primary other than `port` (a failover happened). */
  waitForNewPrimary(port: number, timeoutMs: number): Promise<number>;
  /** Resolves once every replica of the primary has acknowledged all its writes so far (WAIT). */
  waitReplicated(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface SentinelRedisOptions {
  /** requirepass (and masterauth) of the primary and the replica. */
  readonly password?: string;
  /** requirepass of the sentinels (and what they use with each other). */
  readonly sentinelPassword?: string;
}

interface SentinelProcess {
  readonly port: number;
  readonly child: ChildProcess;
  log(): string;
}

export async function startSentinelRedis(opts: SentinelRedisOptions = {}): Promise<TestSentinelRedis> {
  const auth = opts.password === undefined ? [] : ['--requirepass', opts.password, '--masterauth', opts.password];
  const primary = await startTestRedis({ args: auth });
  const started: TestRedis[] = [primary];
  const sentinels: SentinelProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'hpd-sentinel-'));
  const stopAll = async (): Promise<void> => {
    await Promise.all(sentinels.map((s) => stopChild(s.child)));
    await Promise.all(started.map((r) => r.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const replica = await startTestRedis({ args: [...auth, '--replicaof', '127.0.0.1', String(primary.port)] });
    started.push(replica);
    const ports = (await freePorts(3)) as number[];
    for (const port of ports) sentinels.push(await startSentinel(dir, port, primary.port, opts));
    await waitForTopology(ports, opts.sentinelPassword);
    const sentinelList = ports.map((p) => `127.0.0.1:${p}`).join(',');
    const ask = async <T>(run: (r: Redis) => Promise<T>): Promise<T> => {
      let last: unknown;
      for (const port of ports) {
        const r = sentinelClient(port, opts.sentinelPassword);
        try {
          await r.connect();
          return await run(r);
        } catch (err) {
          last = err;
        } finally {
          r.disconnect();
        }
      }
      throw last;
    };
    const primaryPort = (): Promise<number> =>
      ask(async (r) => Number(((await r.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as string[])[1]));
    const userInfo = opts.password === undefined ? '' : `:${encodeURIComponent(opts.password)}@`;
    const query = opts.sentinelPassword === undefined ? '' : `?sentinelPassword=${encodeURIComponent(opts.sentinelPassword)}`;
    return {
      url: `redis+sentinel://${userInfo}${sentinelList}/${MASTER_NAME}/0${query}`,
      servers: [primary, replica],
      sentinelPorts: ports,
      primaryPort,
      async waitForNewPrimary(port, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const now = await primaryPort().catch(() => port);
          if (now !== port) return now;
          if (Date.now() > deadline) throw new Error(`no failover within ${timeoutMs} ms: ${sentinels.map((s) => s.log()).join('\n')}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
      async waitReplicated(timeoutMs = 5000) {
        const port = await primaryPort();
        const r = new Redis({ port, host: '127.0.0.1', password: opts.password, maxRetriesPerRequest: 0 });
        try {
          const replicas = Number(/connected_slaves:(\d+)/.exec(await r.info('replication'))?.[1] ?? 0);
          const acked = Number(await r.call('WAIT', String(replicas), String(timeoutMs)));
          if (acked < replicas) throw new Error(`${acked} of ${replicas} replicas acknowledged within ${timeoutMs} ms`);
        } finally {
          r.disconnect();
        }
      },
      close: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function startSentinel(dir: string, port: number, primaryPort: number, opts: SentinelRedisOptions): Promise<SentinelProcess> {
  // Sentinel rewrites its configuration file (what it learns about the topology): one each, writable.
  const conf = join(dir, `sentinel-${port}.conf`);
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      'protected-mode no',
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
      ...(opts.password === undefined ? [] : [`sentinel auth-pass ${MASTER_NAME} ${JSON.stringify(opts.password)}`]),
      ...(opts.sentinelPassword === undefined
        ? []
        : [`requirepass ${JSON.stringify(opts.sentinelPassword)}`, `sentinel sentinel-pass ${JSON.stringify(opts.sentinelPassword)}`]),
      '',
    ].join('\n'),
  );
  let log = '';
  const child = spawn(REDIS_SENTINEL, [conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = sentinelClient(port, opts.sentinelPassword, () => null);
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      break;
    } catch {
      r.disconnect();
      if (child.exitCode !== null || Date.now() > deadline) {
        await stopChild(child);
        throw new Error(`redis-sentinel did not start on ${port}: ${log.trim()}`);
      }
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  return { port, child, log: () => log };
}

/** Waits until every sentinel knows the replica and both other sentinels (hello messages every 2 s). */
async function waitForTopology(ports: readonly number[], password: string | undefined): Promise<void> {
  const deadline = Date.now() + 30_000;
  const clients = ports.map((port) => new Redis({ port, host: '127.0.0.1', password, maxRetriesPerRequest: 0 }));
  try {
    for (;;) {
      const views = await Promise.all(
        clients.map(async (c) => {
          const flat = (await c.call('SENTINEL', 'master', MASTER_NAME)) as string[];
          const field = (name: string): number => Number(flat[flat.indexOf(name) + 1]);
          return { replicas: field('num-slaves'), others: field('num-other-sentinels') };
        }),
      );
      if (views.every((v) => v.replicas >= 1 && v.others >= ports.length - 1)) return;
      if (Date.now() > deadline) throw new Error(`sentinels did not learn the topology within 30 s: ${JSON.stringify(views)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    for (const c of clients) c.disconnect();
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await gone;
}
