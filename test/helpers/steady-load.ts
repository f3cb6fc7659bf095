/**
 * @module A load generator for restart and failure drills: GET requests at a fixed rate (open loop: a
 * request is due every 1/rate s whatever the answers do) over many keep-alive connections, one request
 * at a time on each, and no retry of any kind, so every request the server side loses is counted. A
 * failure is a request whose connection closed or failed before its answer, an answer that is not HTTP,
 * a 5xx, or no answer within the timeout; a connection that closes with nothing outstanding is just
 * replaced. Raw sockets rather than fetch: undici may resend a request whose reused connection was
 * closed, which would hide exactly the failures a drill must see.
 */
import { connect, type Socket } from 'node:net';

export interface LoadCounts {
  /** Requests written to a connection. */
  readonly sent: number;
  /** Answers below 500. */
  readonly ok: number;
  /** Failed requests (sum of `failures`). */
  readonly failed: number;
  /** Failed requests by cause: `5xx:503`, `closed without an answer`, `ECONNRESET`, `timeout`… */
  readonly failures: Readonly<Record<string, number>>;
  /** Requests due while every connection was busy and the pool full: not sent (the client fell behind). */
  readonly late: number;
}

export interface SteadyLoad {
  /** Counts so far. */
  counts(): LoadCounts;
  /** Stops sending, waits for the answers outstanding (up to the timeout), closes everything. */
  stop(): Promise<LoadCounts>;
}

export interface SteadyLoadOptions {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Requests per second. */
  readonly rate: number;
  /** Connections opened at the start (used in turn); more are opened while all are busy. */
  readonly connections: number;
  /** Most connections open at once. */
  readonly maxConnections: number;
  /** An answer must be complete this long after its request was written; default 10 s. */
  readonly timeoutMs?: number;
}

/** How often due requests are sent. */
const TICK_MS = 5;

interface Conn {
  readonly socket: Socket;
  connected: boolean;
  /** When the request outstanding was written; null when idle. */
  since: number | null;
  buffer: Buffer;
}

/** The length of a complete HTTP/1.1 response at the start of `b`, with its status and Connection: close; null if incomplete. */
function completeResponse(b: Buffer): { length: number; status: number; close: boolean } | null | 'junk' {
  const end = b.indexOf('\r\n\r\n');
  if (end < 0) return b.length > 65_536 ? 'junk' : null;
  const head = b.subarray(0, end).toString('latin1');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  if (m === null) return 'junk';
  const status = Number(m[1]);
  const close = /\r\nconnection:\s*close/i.test(head);
  const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (cl !== null) {
    const length = end + 4 + Number(cl[1]);
    return b.length >= length ? { length, status, close } : null;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const last = b.indexOf('\r\n0\r\n\r\n', end);
    return last < 0 ? null : { length: last + 7, status, close };
  }
  // No length: 1xx/204/304 have no body; anything else would be delimited by the close.
  return { length: end + 4, status, close };
}

export function startSteadyLoad(o: SteadyLoadOptions): SteadyLoad {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const extra = Object.entries(o.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const request = Buffer.from(`GET ${o.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\n${extra}\r\n`, 'latin1');
  const conns = new Set<Conn>();
  const idle: Conn[] = [];
  const failures: Record<string, number> = {};
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let late = 0;
  let due = 0;
  let sending = true;
  const t0 = performance.now();

  const fail = (why: string): void => {
    failed++;
    failures[why] = (failures[why] ?? 0) + 1;
  };
  const send = (c: Conn): void => {
    c.since = performance.now();
    sent++;
    c.socket.write(request);
  };
  const open = (): Conn => {
    const socket = connect(o.port, o.host);
    socket.setNoDelay(true);
    const c: Conn = { socket, connected: false, since: null, buffer: Buffer.alloc(0) };
    conns.add(c);
    socket.on('connect', () => {
      c.connected = true;
      if (c.since === null) idle.push(c);
    });
    socket.on('data', (d: Buffer) => {
      c.buffer = c.buffer.length === 0 ? d : Buffer.concat([c.buffer, d]);
      const r = completeResponse(c.buffer);
      if (r === null) return;
      if (r === 'junk' || c.since === null) {
        if (c.since !== null) fail('not an HTTP answer');
        c.since = null;
        socket.destroy();
        return;
      }
      c.buffer = c.buffer.subarray(r.length);
      c.since = null;
      if (r.status >= 500) fail(`5xx:${r.status}`);
      else ok++;
      if (r.close) socket.destroy();
      else idle.push(c);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (c.since !== null) fail(err.code ?? err.message);
      c.since = null;
    });
    socket.on('close', () => {
      if (c.since !== null) fail('closed without an answer');
      c.since = null;
      conns.delete(c);
      const i = idle.indexOf(c);
      if (i >= 0) idle.splice(i, 1);
    });
    return c;
  };

  const tick = (): void => {
    const now = performance.now();
    for (const c of conns)
      if (c.since !== null && now - c.since > timeoutMs) {
        fail('timeout');
        c.since = null;
        c.socket.destroy();
      }
    if (!sending) return;
    const target = Math.floor(((now - t0) * o.rate) / 1000);
    while (due < target) {
      due++;
      const c = idle.shift();
      if (c !== undefined && !c.socket.destroyed) {
        send(c);
      } else if (conns.size < o.maxConnections) {
        const fresh = open();
        // Written at once: the kernel sends it when the connection is made (a refused connect fails it).
        send(fresh);
      } else late++;
    }
  };
  for (let i = 0; i < o.connections; i++) open();
  const timer = setInterval(tick, TICK_MS);

  const counts = (): LoadCounts => ({ sent, ok, failed, failures: { ...failures }, late });
  return {
    counts,
    async stop() {
      sending = false;
      const deadline = performance.now() + timeoutMs + 1000;
      while ([...conns].some((c) => c.since !== null) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      clearInterval(timer);
      for (const c of conns) c.socket.destroy();
      return counts();
    },
  };
}

/** What happened between two snapshots of the same load. */
export function countsSince(before: LoadCounts, after: LoadCounts): LoadCounts {
  const failures: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.failures)) {
    const d = v - (before.failures[k] ?? 0);
    if (d > 0) failures[k] = d;
  }
  return {
    sent: after.sent - before.sent,
    ok: after.ok - before.ok,
    failed: after.failed - before.failed,
    failures,
    late: after.late - before.late,
  };
}
