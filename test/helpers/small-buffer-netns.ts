/**
 * @module A network namespace with small TCP send buffers, reachable from the test's own namespace
 * through a veth pair. Loopback hides partial writes (its send buffer autotunes to megabytes); a server
 * started in here (`run`) cannot hand a 185 KB body to the kernel at once, so a client that reads
 * slowly keeps the response in flight, as a slow link does. `tcp_wmem` is per namespace: nothing else
 * on the machine changes. Needs root (`ip netns`, as test/http/partial-write.test.ts).
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface SmallBufferNetns {
  /** The namespace side's address, reachable from the test. */
  readonly address: string;
  /** Starts `command` inside the namespace (stdout and stderr piped). */
  run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcessByStdio<null, Readable, Readable>;
  /** Removes the namespace and the veth pair. */
  remove(): void;
}

function ip(args: readonly string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

export function createSmallBufferNetns(): SmallBufferNetns {
  if (process.getuid?.() !== 0)
    throw new Error('a network namespace needs root: run the suite as root (npm test does on the project machines)');
  const id = process.pid % 100_000;
  const ns = `hpd-sb-${id}`;
  const [outer, inner] = [`hsbo${id}`, `hsbi${id}`];
  // A /30 of its own per process, so tests running at once on the machine never share one.
  const net = `10.${200 + (id % 50)}.${(id >> 6) % 256}.${(id % 64) * 4}`;
  const base = net.split('.').map(Number) as [number, number, number, number];
  const host = (n: number): string => `${base[0]}.${base[1]}.${base[2]}.${base[3] + n}`;
  const remove = (): void => {
    spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', outer]);
  };
  try {
    ip(['netns', 'add', ns]);
    ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]);
    ip(['link', 'set', inner, 'netns', ns]);
    ip(['addr', 'add', `${host(1)}/30`, 'dev', outer]);
    ip(['link', 'set', outer, 'up']);
    ip(['netns', 'exec', ns, 'ip', 'addr', 'add', `${host(2)}/30`, 'dev', inner]);
    ip(['netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up']);
    ip(['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    ip(['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv4.tcp_wmem=4096 8192 16384']);
  } catch (err) {
    remove();
    throw err;
  }
  return {
    address: host(2),
    run: (command, args, env) => spawn('ip', ['netns', 'exec', ns, command, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }),
    remove,
  };
}
