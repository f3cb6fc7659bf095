/**
 * @module A cluster as operators run it, on loopback: Debian's HAProxy with deploy/haproxy.cfg in front
 * of two `hpd serve` instances (each with its own copy of the fixture build and its own state
 * directory, one REST worker each) sharing one real redis-server — or, with `{ sentinel: true }`, a
 * primary, a replica and three sentinels (redis-sentinel.ts), the instances given a redis+sentinel://
 * URL. Instances can be killed, restarted and reconfigured; HAProxy's admin socket tells which
 * instance answered what.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture } from './fixture-build.ts';
import { startHaproxy, type TestHaproxy } from './haproxy.ts';
import { startTestRedis, type TestRedis } from './redis-server.ts';
import { startSentinelRedis, type TestSentinelRedis } from './redis-sentinel.ts';
import { HPD, spawnServe, type ServeChild } from './serve-fixture.ts';
import { freePorts } from './services.ts';

export interface ClusterInstance {
  readonly name: string;
  readonly buildsRoot: string;
  readonly restUrl: string;
  readonly mcpUrl: string;
  readonly authUrl: string;
  /** The instance's /metrics (HPD_METRICS_PORT). */
  readonly metricsUrl: string;
  readonly env: NodeJS.ProcessEnv;
  /** The running process (replaced by restart()). */
  serve: ServeChild | null;
}

export interface TestCluster {
  /** The Redis server; with Sentinel, the primary at start (the sentinels may promote the other). */
  readonly redis: TestRedis;
  /** The Sentinel deployment, when the cluster runs on one. */
  readonly sentinel: TestSentinelRedis | null;
  /** The HPD_REDIS_URL every instance has. */
  readonly redisUrl: string;
  readonly lb: TestHaproxy;
  readonly instances: readonly [ClusterInstance, ClusterInstance];
  readonly dir: string;
  /** Runs `hpd ARGS` as instance i's operator would (its environment, so on the shared Redis). */
  hpd(i: number, args: readonly string[]): { status: number | null; stdout: string; stderr: string };
  /** A new API key through the CLI of instance 0. */
  createKey(tier: 'free' | 'pro' | 'enterprise'): string;
  /** SIGKILL of instance i. */
  kill(i: number): Promise<void>;
  /** SIGTERM of instance i (drain), then a fresh start; how long it took to exit and its exit code. */
  restart(i: number): Promise<{ readonly exitMs: number; readonly code: number | null }>;
  /** Resolves once HAProxy sees both (or `count`) REST servers UP. */
  waitUp(count?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** A primary, a replica and three sentinels instead of one server (default false). */
  readonly sentinel?: boolean;
  /** Added to HAProxy's environment (its HPD_LB_* variables). */
  readonly lbEnv?: Readonly<Record<string, string>>;
}

/** @param extraEnv added to both instances' environment */
export async function startCluster(extraEnv: Readonly<Record<string, string>> = {}, opts: ClusterOptions = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-cluster-'));
  const sentinel = opts.sentinel === true ? await startSentinelRedis() : null;
  const redis = sentinel?.servers[0] ?? (await startTestRedis());
  const redisUrl = sentinel?.url ?? redis.url;
  const closeRedis = (): Promise<void> => (sentinel === null ? redis.close() : sentinel.close());
  const root0 = await buildFixture(join(dir, 'host0'));
  // Each host serves its own copy of the build, as on separate machines.
  const root1 = join(dir, 'host1', 'builds');
  cpSync(root0, root1, { recursive: true, verbatimSymlinks: true });
  const [lbRest, lbMcp, lbAuth, ...ports] = (await freePorts(11)) as number[];
  const lbUrls = { rest: `http://127.0.0.1:${lbRest}`, mcp: `http://127.0.0.1:${lbMcp}/mcp`, auth: `http://127.0.0.1:${lbAuth}` };
  const instances = [0, 1].map((i): ClusterInstance => {
    const [rest, mcp, auth, metrics] = ports.slice(i * 4, i * 4 + 4) as [number, number, number, number];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HPD_DATA_DIR: i === 0 ? root0 : root1,
      HPD_STATE_DIR: join(dir, `host${i}`, 'state'),
      HPD_REDIS_URL: redisUrl,
      HPD_PORT: String(rest),
      HPD_MCP_PORT: String(mcp),
      HPD_AUTH_PORT: String(auth),
      HPD_METRICS_PORT: String(metrics),
      // Links, the MCP resource and the issuer name the load balancer, as clients reach them.
      HPD_BASE_URL: lbUrls.rest,
      HPD_MCP_URL: lbUrls.mcp,
      HPD_AUTH_URL: lbUrls.auth,
      HPD_WORKERS: '1',
      // Half of it is the notice (HPD_DRAIN_NOTICE_SECONDS): 1 s, more than HAProxy's ~0.8 s to mark an instance down.
      HPD_DRAIN_SECONDS: '2',
      // HAProxy reaches the instances from loopback and names each client in a PROXY header.
      HPD_TRUSTED_PROXIES: '127.0.0.1',
      ...extraEnv,
    };
    delete env.NODE_TEST_CONTEXT;
    return {
      name: `hpd${i + 1}`,
      buildsRoot: i === 0 ? root0 : root1,
      restUrl: `http://127.0.0.1:${rest}`,
      mcpUrl: `http://127.0.0.1:${mcp}/mcp`,
      authUrl: `http://127.0.0.1:${auth}`,
      metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
      env,
      serve: null,
    };
  }) as [ClusterInstance, ClusterInstance];
  const stop = async (inst: ClusterInstance, signal: NodeJS.Signals): Promise<{ exitMs: number; code: number | null }> => {
    const s = inst.serve;
    inst.serve = null;
    if (s === null || s.child.exitCode !== null) return { exitMs: 0, code: s?.child.exitCode ?? null };
    const t0 = performance.now();
    s.child.kill(signal);
    const code = await s.exited;
    return { exitMs: performance.now() - t0, code };
  };
  const stopAll = async (): Promise<void> => {
    for (const inst of instances) await stop(inst, 'SIGKILL');
    await closeRedis();
    rmSync(dir, { recursive: true, force: true });
  };
  let lb: TestHaproxy;
  try {
    // Both at once, as hosts come up in a deployment (first starts on one Redis agree on one set of secrets).
    const started = await Promise.allSettled(instances.map((inst) => spawnServe(inst.env)));
    started.forEach((r, i) => {
      if (r.status === 'fulfilled') instances[i]!.serve = r.value;
    });
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    lb = await startHaproxy(
      instances.map((inst) => ({
        host: '127.0.0.1',
        restPort: Number(inst.env.HPD_PORT),
        mcpPort: Number(inst.env.HPD_MCP_PORT),
        authPort: Number(inst.env.HPD_AUTH_PORT),
      })),
      { ports: { rest: lbRest!, mcp: lbMcp!, auth: lbAuth! }, env: opts.lbEnv },
    );
  } catch (err) {
    // Instances left running would keep the test process alive after the failure.
    await stopAll();
    throw err;
  }
  const waitUp = async (count = 2): Promise<void> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const up = (await lb.stats()).filter((s) => s.backend === 'be_rest' && s.server !== 'BACKEND' && s.status.startsWith('UP')).length;
      if (up >= count) return;
      if (Date.now() > deadline) throw new Error(`HAProxy sees ${up} REST servers up, not ${count}: ${JSON.stringify(await lb.stats())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const hpd = (i: number, args: readonly string[]): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync(process.execPath, [HPD, ...args], { env: instances[i]!.env, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  try {
    await waitUp();
  } catch (err) {
    await lb.stop();
    await stopAll();
    throw err;
  }
  return {
    redis,
    sentinel,
    redisUrl,
    lb,
    instances,
    dir,
    hpd,
    createKey(tier) {
      const r = hpd(0, ['keys', 'create', '--tier', tier, '--label', `cluster ${tier}`]);
      if (r.status !== 0) throw new Error(`hpd keys create failed: ${r.stderr}`);
      return r.stdout.trim();
    },
    async kill(i) {
      await stop(instances[i]!, 'SIGKILL');
    },
    async restart(i) {
      const stopped = await stop(instances[i]!, 'SIGTERM');
      instances[i]!.serve = await spawnServe(instances[i]!.env);
      return stopped;
    },
    waitUp,
    async close() {
      await lb.stop();
      await stopAll();
    },
  };
}
