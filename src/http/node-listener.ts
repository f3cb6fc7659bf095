/**
 * @module The `node:http` listeners (MCP, embedded authorization server) made safe to expose: time
 * limits on every phase of a connection, a cap on concurrent connections, and a shutdown that ends
 * within a bounded grace period whatever clients do.
 *
 * Why: Node's defaults keep a connection that sends nothing for up to 60 s (headersTimeout, checked only
 * every 30 s) and accept connections without limit, so a flood of idle sockets on one listener used up
 * the process's file descriptors and took REST down with it. Node also counts a connection that has not
 * sent a byte as "active", so `server.close()` + `closeIdleConnections()` waited on it for as long as it
 * stayed open: SIGTERM hung. Here every listener gets its own cap (the sum stays well below the fd
 * limit, so the uWS REST front always has descriptors left) and connections with nothing in flight are
 * closed at once on shutdown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createConnectionCap } from './connection-cap.ts';
import { BODY_NOT_ALLOWED, framingProblem } from './front-problems.ts';
import { createAddressCount } from './node-address-count.ts';
import { gateProxyHeaders } from './proxy-protocol.ts';
import { framingFault, type FramingFields } from './request-framing.ts';
import type { TrustedProxies } from './trusted-proxies.ts';
import { InvariantError } from '../invariant.ts';

export interface ListenerLimits {
  /** The request head must be complete this long after it started (or after the connection opened). */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must be received within this (slow-loris bodies); ≥ headersTimeoutMs. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** A connection with no request in progress that sends nothing for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Concurrent connections; further ones are closed as soon as they are accepted. */
  readonly maxConnections: number;
  /**
   * Concurrent connections one client address may hold (the client a trusted proxy names, else the
   * peer); further ones get a 429 problem and are closed. 0: no per-address limit.
   */
  readonly maxConnectionsPerAddress: number;
}

export const DEFAULT_LISTENER_LIMITS: ListenerLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 10_000,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 100,
});

/** How long a shutdown lets requests in flight finish before closing their connections. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface NodeListener {
  readonly server: Server;
  /**
   * Stops accepting, closes every connection with no request in progress, lets requests in flight
   * finish (their responses carry `Connection: close`) for up to `graceMs`, then closes whatever is
   * left. Idempotent: later calls return the first call's promise.
   */
  close(graceMs: number): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A `node:http` server with {@link ListenerLimits} applied.
 *
 * @param name names the listener in the log line written when the cap is reached
 * @param trustedProxies peers whose PROXY protocol v2 header names the client (src/http/proxy-protocol.ts)
 * @example
 * const listener = createNodeListener('mcp', (req, res) => res.end('ok'), { maxConnections: 500 });
 * listener.server.listen(8081);
 * await listener.close(10_000);
 */
export function createNodeListener(
  name: string,
  handler: Handler,
  overrides: Partial<ListenerLimits> = {},
  trustedProxies?: TrustedProxies,
): NodeListener {
  const limits: ListenerLimits = { ...DEFAULT_LISTENER_LIMITS, ...overrides };
  checkLimits(limits);
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the header and request deadlines on this interval (default 30 s, which would let a
    // 10 s limit run to 40 s); a sweep over at most maxConnections entries is cheap.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  });
  server.maxConnections = limits.maxConnections;

  /** Open connections and the number of requests each has in progress. */
  const inFlight = new Map<Socket, number>();
  let draining = false;
  const cap = createConnectionCap(name, limits.maxConnections);
  server.on('drop', () => cap.refuse());

  // Node answers requests its parser refuses (a lowercase method, a 20 KB header block, a request that
  // timed out) with a bare status line, and closes CONNECT requests without a word; these are answered
  // with a problem document instead. A client that already reset gets nothing.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser stays attached while the refused connection lingers, so more bytes from a pipelining
    // client raise more errors: the answer is already on its way, and destroying now would reset it.
    if (lingering.has(socket)) return;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, detail] = clientErrorAnswer(err.code, (err as { reason?: unknown }).reason);
    endLingering(socket, rawProblemResponse(status, detail));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    endLingering(socket, rawProblemResponse(405, 'CONNECT is not supported: this is not a proxy.'));
  });

  const perAddress = createAddressCount(name, limits.maxConnectionsPerAddress);
  server.on('connection', (socket: Socket) => {
    // Registered before the PROXY header gate, so this runs once the header named the client.
    if (!perAddress.admit(socket)) {
      endLingering(socket, rawProblemResponse(429, `Too many connections from this address (limit ${limits.maxConnectionsPerAddress}).`));
      return;
    }
    inFlight.set(socket, 0);
    // Node's own socket timeout (server.timeout) would also cut long responses such as MCP's SSE
    // streams; this one runs only while no request is in progress (see 'request' below).
    socket.setTimeout(limits.idleTimeoutMs);
    socket.once('close', () => inFlight.delete(socket));
  });
  // Last: it holds back the listeners above (Node's HTTP parser's first) until the header is read.
  const gate =
    trustedProxies === undefined || trustedProxies.empty ? null : gateProxyHeaders(server, trustedProxies, limits.headersTimeoutMs);

  // Before the handler, so a response started while draining still gets `Connection: close`.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    socket.setTimeout(0);
    if (draining) res.setHeader('connection', 'close');
    res.once('close', () => {
      const n = inFlight.get(socket);
      if (n === undefined) return;
      inFlight.set(socket, n - 1);
      // Between requests keepAliveTimeout applies (Node sets it when the response finishes).
      if (n === 1 && draining) endSocket(socket);
    });
  });

  // After the listener above, so a refused request's close is counted like any other. Node's parser
  // has read the whole write by now and emits the requests pipelined behind a refused one all the
  // same: they are never handed to the handler, and their connection is already closing.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (lingering.has(socket)) return;
    const fault = framingFault(framingFields(req));
    if (fault === null) return handler(req, res);
    const detail = fault.kind === 'body' ? BODY_NOT_ALLOWED.detail : framingProblem(fault.reason).detail;
    endLingering(socket, rawProblemResponse(400, detail, req.method === 'HEAD'));
  });

  let closing: Promise<void> | undefined;
  return {
    server,
    close(graceMs) {
      closing ??= new Promise<void>((resolve) => {
        draining = true;
        const force = setTimeout(
          () => {
            server.closeAllConnections();
            for (const socket of inFlight.keys()) socket.destroy();
          },
          Math.max(0, graceMs),
        );
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        for (const [socket, n] of inFlight) if (n === 0) socket.destroy();
        for (const socket of gate?.pending ?? []) socket.destroy();
      });
      return closing;
    },
  };
}

const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
};

/** llhttp's errors of framing fields: its reason names the field. */
const FRAMING_ERRORS = new Set(['HPE_UNEXPECTED_CONTENT_LENGTH', 'HPE_INVALID_CONTENT_LENGTH', 'HPE_INVALID_TRANSFER_ENCODING']);
/** llhttp's errors of a line not ended by CRLF (a bare CR or LF). */
const LINE_END_ERRORS = new Set(['HPE_CR_EXPECTED', 'HPE_LF_EXPECTED']);

/** The details of what Node's HTTP parser refuses, other than framing (front-problems.ts). */
const HEADER_TOO_LARGE = 'The request header block is too large (Node limit: 16 KiB).';
const REQUEST_TIMEOUT = 'The request was not received in time.';
const NOT_HTTP = 'The request is not valid HTTP/1.1 (request line, method or header syntax).';

/** Status and detail for an error of Node's HTTP parser (its `code`, and `reason` where it has one). */
function clientErrorAnswer(code: string | undefined, reason: unknown): [number, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, HEADER_TOO_LARGE];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, REQUEST_TIMEOUT];
  if (code !== undefined && FRAMING_ERRORS.has(code))
    return [400, framingProblem(`The Content-Length or Transfer-Encoding is invalid (${String(reason ?? code)}).`).detail];
  if (code !== undefined && LINE_END_ERRORS.has(code))
    return [400, framingProblem('A line of the request head does not end with CRLF (a bare CR or LF).').detail];
  return [400, NOT_HTTP];
}

/**
 * A whole HTTP/1.1 response with an RFC 9457 body (its head only, for HEAD), written straight to the
 * socket: no request object exists for these. `about:blank` because the status says everything
 * (RFC 9457 §4.2.1).
 */
function rawProblemResponse(status: number, detail: string, head = false): string {
  const title = STATUS_TITLES[status] ?? 'Error';
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  // A refusal for too many connections passes as soon as one closes: say when to try again (RFC 6585).
  const retry = status === 429 ? 'retry-after: 1\r\n' : '';
  return `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${retry}connection: close\r\n\r\n${head ? '' : body}`;
}

/**
 * The framing fields of a request as sent: Node joins repeated fields in `headers` (and drops a second
 * Host), `rawHeaders` keeps every one.
 */
function framingFields(req: IncomingMessage): FramingFields {
  const transferEncoding: string[] = [];
  const contentLength: string[] = [];
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // Every framing name is 4, 14 or 17 characters long: most fields are skipped without lowercasing.
    if (name.length !== 4 && name.length !== 14 && name.length !== 17) continue;
    const lower = name.toLowerCase();
    if (lower === 'host') hosts++;
    else if (lower === 'content-length') contentLength.push(raw[i + 1]!);
    else if (lower === 'transfer-encoding') transferEncoding.push(raw[i + 1]!);
  }
  return { method: req.method ?? '', transferEncoding, contentLength, hosts };
}

/** How long a refused connection is read from (and discarded) after its answer, at most. */
const LINGER_MS = 2_000;

/**
 * Sends a last answer and closes, reading and discarding what the client already sent meanwhile: a
 * socket closed with unread data sends a TCP reset, which makes the client's kernel drop the answer
 * before the client reads it (a client that pipelined after a malformed request saw nothing at all).
 * The socket gets an error listener of its own: Node takes its own off a CONNECT request's socket, and
 * a reset from that client was an unhandled 'error' that ended the process.
 */
const lingering = new WeakSet<Duplex>();

function endLingering(socket: Duplex, answer: string): void {
  lingering.add(socket);
  socket.on('error', () => socket.destroy());
  socket.on('data', () => {});
  socket.resume();
  socket.end(answer);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Ends a connection once what was written to it has been flushed. */
function endSocket(socket: Socket): void {
  socket.end(() => socket.destroy());
}

function checkLimits(l: ListenerLimits): void {
  for (const [k, v] of Object.entries(l)) {
    const least = k === 'maxConnectionsPerAddress' ? 0 : 1;
    if (!Number.isSafeInteger(v) || v < least) throw new InvariantError(`listener limit ${k} must be an integer ≥ ${least}, got ${v}`);
  }
  if (l.headersTimeoutMs > l.requestTimeoutMs)
    throw new InvariantError(`headersTimeoutMs (${l.headersTimeoutMs}) must not exceed requestTimeoutMs (${l.requestTimeoutMs})`);
}
