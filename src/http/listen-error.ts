/**
 * @module Why a listener could not bind its address, in one line an operator can act on.
 *
 * uWebSockets.js reports a failed listen as `false`, without the reason, so the reason is found by
 * binding the same address once with node:net: EADDRINUSE (another process, or another `hpd serve`),
 * EACCES (a privileged port), EADDRNOTAVAIL (an address this host does not have).
 */
import { createServer } from 'node:net';

export class ListenError extends Error {
  readonly code: string;
  constructor(listener: string, host: string, port: number, code: string) {
    super(
      `${listener}: cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${code} (${REASONS[code] ?? 'see the system error code'})`,
    );
    this.name = 'ListenError';
    this.code = code;
  }
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use: another process, or another hpd serve, listens there',
  EACCES: 'permission denied: ports below 1024 need privileges',
  EADDRNOTAVAIL: 'this host has no such address',
};

/** The error node:net gets binding `host:port` exclusively, or 'UNKNOWN' when it binds (then it is released). */
export function probeListenError(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'UNKNOWN'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve('UNKNOWN')));
  });
}

/** Wraps a node:net listen error (MCP, authorization server) the same way. */
export function toListenError(listener: string, host: string, port: number, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? new ListenError(listener, host, port, code) : (err as Error);
}
