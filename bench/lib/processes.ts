/**
 * @module Child processes of the load benchmark: the three servers and the load generator, pinned to
 * their own cores when the machine has two or more, plus their memory as the kernel reports it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sleep } from './util.ts';

/** Cores for the server under test and for the load generator; null when pinning is not possible. */
export interface Pinning {
  readonly serverCpu: number;
  readonly generatorCpu: number;
}

export function detectPinning(): Pinning | null {
  if (process.platform !== 'linux' || availableParallelism() < 2) return null;
  const r = spawnSync('taskset', ['-c', '0', 'true']);
  return r.status === 0 ? { serverCpu: 1, generatorCpu: 0 } : null;
}

/** The command line, prefixed with `taskset -c CPU` when a core is given. */
export function pinnedCommand(cpu: number | null, command: string, args: readonly string[]): [string, string[]] {
  return cpu === null ? [command, [...args]] : ['taskset', ['-c', String(cpu), command, ...args]];
}

/** Environment for children: the test runner's markers removed, so a child never thinks it is a test. */
export function childEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** The `hpd` entry point every bench starts. */
export const HPD = fileURLToPath(new URL('../../bin/hpd.js', import.meta.url));

/** A daily quota no bench run reaches, so the counting stays on the path but never refuses. */
export const QUOTA_OUT_OF_REACH = '1000000000000';

/** The environment of a benchmarked `hpd serve`: its builds, its own state, every tier's quota out of reach. */
export function benchServeEnv(dataDir: string, stateDir: string, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return childEnv({
    HPD_DATA_DIR: dataDir,
    HPD_STATE_DIR: stateDir,
    HPD_QUOTA_FREE: QUOTA_OUT_OF_REACH,
    HPD_QUOTA_PRO: QUOTA_OUT_OF_REACH,
    HPD_QUOTA_ENTERPRISE: QUOTA_OUT_OF_REACH,
    ...extra,
  });
}

/** An enterprise key made the way an operator makes one (`hpd keys create`), in the state `env` points at. */
export function enterpriseKey(env: NodeJS.ProcessEnv, label = 'bench'): string {
  return createKey(env, 'enterprise', label);
}

/** A key of `tier` made the way an operator makes one (`hpd keys create`), in the state `env` points at. */
export function createKey(env: NodeJS.ProcessEnv, tier: 'free' | 'pro' | 'enterprise', label: string): string {
  const made = spawnSync(process.execPath, [HPD, 'keys', 'create', '--tier', tier, '--label', label], { env, encoding: 'utf8' });
  const key = made.stdout?.trim() ?? '';
  if (made.status !== 0 || key === '') throw new Error(`hpd keys create failed: ${made.stderr?.trim() ?? made.error?.message}`);
  return key;
}

/**
 * Free loopback ports for servers that another process will bind (HAProxy, Redis, `hpd serve`).
 *
 * They are drawn at random from below the kernel's ephemeral range: a port that bind(0) handed out
 * comes from that range, which every outgoing connection on the machine draws from too, so in the
 * seconds before the server binds it a client socket of another test could take it ("Address already
 * in use"). Below the range only another explicit bind can collide. Each candidate is held open until
 * all n are found, so the n differ.
 */
export async function freePorts(n: number): Promise<number[]> {
  const [low] = ephemeralRange();
  const pool = low > 12_000 ? { from: 10_000, to: low - 1 } : null;
  const held: Server[] = [];
  const listen = (port: number): Promise<Server | null> =>
    new Promise((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(null));
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  try {
    for (let tries = 0; held.length < n; tries++) {
      const candidate = pool === null || tries > 1000 ? 0 : pool.from + Math.floor(Math.random() * (pool.to - pool.from + 1));
      const s = await listen(candidate);
      if (s !== null) held.push(s);
    }
    return held.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
}

/** The kernel's range for ephemeral ports (Linux), or the IANA one elsewhere. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr so far (for error messages). */
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnServerOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly port: number;
  readonly cpu: number | null;
  /** Ready when this URL answers 200; otherwise when stdout prints a line with `"ready":true`. */
  readonly readyUrl?: string;
  readonly timeoutMs?: number;
  /**
   * Called with every line of stdout (e.g. V8's `--trace-gc-nvp` lines); stdout is then not kept past
   * readiness. The pipe is always read, so a chatty child never blocks on a full pipe.
   */
  readonly onStdoutLine?: (line: string) => void;
}

export async function spawnServer(o: SpawnServerOptions): Promise<ServerProcess> {
  const [cmd, args] = pinnedCommand(o.cpu, o.command, o.args);
  const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const text = d.toString();
    if (o.onStdoutLine === undefined) {
      stdout += text;
      return;
    }
    if (stdout.length < 1 << 16) stdout += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) o.onStdoutLine(line);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${o.name} exited (${exitCode}) before it was ready: ${stderr.trim().slice(-2000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${o.name} not ready after ${(o.timeoutMs ?? 120_000) / 1000} s: ${stderr.trim().slice(-2000)}`);
    }
    if (o.readyUrl !== undefined) {
      try {
        const r = await fetch(o.readyUrl);
        await r.arrayBuffer();
        if (r.status === 200) break;
      } catch {
        // not listening yet
      }
    } else if (/"ready":true/.test(stdout)) break;
    await sleep(50);
  }
  return {
    name: o.name,
    pid: child.pid!,
    port: o.port,
    child,
    stderr: () => stderr,
    async stop(graceMs = 5000) {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface Memory {
  /** Resident set size now (VmRSS). */
  readonly rss_bytes: number;
  /** Peak resident set size over the process's life (VmHWM). */
  readonly hwm_bytes: number;
  /** Of VmRSS: anonymous memory (heaps), file-backed pages (memory-mapped LMDB, code) and shared memory. */
  readonly anon_bytes: number;
  readonly file_bytes: number;
  readonly shmem_bytes: number;
}

/** VmRSS and VmHWM of a process from /proc; null when unavailable (not Linux, process gone). */
export function memoryOf(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    const m = {
      rss_bytes: kb('VmRSS'),
      hwm_bytes: kb('VmHWM'),
      anon_bytes: kb('RssAnon'),
      file_bytes: kb('RssFile'),
      shmem_bytes: kb('RssShmem'),
    };
    return Number.isFinite(m.rss_bytes) ? m : null;
  } catch {
    return null;
  }
}

/** User and system CPU seconds of a process so far (Linux /proc; clock ticks of 1/100 s). */
export function cpuTimes(pid: number): { user: number; sys: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) / 100, sys: Number(fields[12]) / 100 };
}

/** User + system CPU seconds of a process so far. */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.sys;
}

/**
 * `hpd serve` (or a shell that execs it) on three free loopback ports, resolved once its REST /readyz
 * answers; `origin` is its REST origin.
 */
export async function spawnHpdServe(o: {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Pin it to this core (taskset); default: not pinned. */
  readonly cpu?: number | null;
  /** Every stdout line (spawnServer's `onStdoutLine`). */
  readonly onStdoutLine?: (line: string) => void;
}): Promise<{ server: ServerProcess; origin: string }> {
  const [port, mcp, auth] = (await freePorts(3)) as [number, number, number];
  const server = await spawnServer({
    name: o.name,
    command: o.command,
    args: [...o.args],
    env: { ...o.env, HPD_HOST: '127.0.0.1', HPD_PORT: String(port), HPD_MCP_PORT: String(mcp), HPD_AUTH_PORT: String(auth) },
    cwd: o.cwd,
    port,
    cpu: o.cpu ?? null,
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    ...(o.onStdoutLine === undefined ? {} : { onStdoutLine: o.onStdoutLine }),
  });
  return { server, origin: `http://127.0.0.1:${port}` };
}
