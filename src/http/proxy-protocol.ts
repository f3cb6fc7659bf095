/**
 * @module The PROXY protocol v2 header (haproxy.org/download/2.6/doc/proxy-protocol.txt, section 2.2)
 * on the node:http listeners (MCP, authorization server): behind the load balancer every connection
 * comes from its address, and the header it sends first (`send-proxy-v2`) names the client.
 *
 * Only a peer listed in HPD_TRUSTED_PROXIES is read this way; anybody else's bytes go to the HTTP
 * parser untouched, so a header from them is not HTTP and gets a 400 like any other garbage: a client
 * cannot name an address, and a header it sends never passes for a request. A trusted peer's connection
 * that starts without the signature, or with the LOCAL command (HAProxy's health checks), keeps the
 * peer's address. A malformed or incomplete header from a trusted peer closes the connection: the
 * proxy is broken or is not the proxy, and guessing where its request starts could read a request
 * smuggled inside the header.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { TrustedProxies } from './trusted-proxies.ts';

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const FIXED = 16;
/**
 * Longest header accepted, TLVs included: addresses take at most 216 bytes (AF_UNIX); HAProxy adds TLVs
 * only when told to (`proxy-v2-options`), and a few of them fit well within this.
 */
export const MAX_PROXY_HEADER_BYTES = 2048;

export type ProxyHeader =
  /** Not enough bytes yet to decide. */
  | { readonly kind: 'incomplete' }
  /** The bytes do not start with the v2 signature: no header, all of them are the connection's. */
  | { readonly kind: 'absent' }
  | { readonly kind: 'invalid'; readonly reason: string }
  /** LOCAL command, or PROXY over an unspecified family: the connection's own addresses stand. */
  | { readonly kind: 'local'; readonly length: number }
  | { readonly kind: 'proxy'; readonly length: number; readonly address: string; readonly port: number };

/** Reads a v2 header at the start of `b` (what arrived so far); `length` is the header's size in bytes. */
export function parseProxyHeader(b: Uint8Array): ProxyHeader {
  const head = Math.min(b.length, SIGNATURE.length);
  for (let i = 0; i < head; i++) if (b[i] !== SIGNATURE[i]) return { kind: 'absent' };
  if (b.length < FIXED) return { kind: 'incomplete' };
  const version = b[12]! >> 4;
  const command = b[12]! & 0x0f;
  if (version !== 2) return { kind: 'invalid', reason: `version ${version}, not 2` };
  if (command > 1) return { kind: 'invalid', reason: `command ${command} is neither LOCAL nor PROXY` };
  const length = FIXED + ((b[14]! << 8) | b[15]!);
  if (length > MAX_PROXY_HEADER_BYTES) return { kind: 'invalid', reason: `header of ${length} bytes (limit ${MAX_PROXY_HEADER_BYTES})` };
  if (b.length < length) return { kind: 'incomplete' };
  const family = b[13]! >> 4;
  const transport = b[13]! & 0x0f;
  if (family > 3 || transport > 2) return { kind: 'invalid', reason: `address family byte 0x${b[13]!.toString(16)}` };
  const needed = [0, 12, 36, 216][family]!;
  if (length - FIXED < needed) return { kind: 'invalid', reason: `${length - FIXED} address bytes for family ${family} (needs ${needed})` };
  // LOCAL: the proxy speaking for itself (health checks). PROXY over UNSPEC or AF_UNIX carries no
  // client IP: the spec has the receiver fall back to the connection's addresses.
  if (command === 0 || family === 0 || family === 3) return { kind: 'local', length };
  if (family === 1) {
    const address = `${b[16]}.${b[17]}.${b[18]}.${b[19]}`;
    return { kind: 'proxy', length, address, port: (b[24]! << 8) | b[25]! };
  }
  return { kind: 'proxy', length, address: ipv6Text(b.subarray(16, 32)), port: (b[48]! << 8) | b[49]! };
}

/** RFC 5952 text of 16 address bytes (an IPv4-mapped one as dotted IPv4, as node:net reports them). */
export function ipv6Text(b: Uint8Array): string {
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups = Array.from({ length: 8 }, (_, i) => (b[i * 2]! << 8) | b[i * 2 + 1]!);
  // The longest run of two or more zero groups becomes "::" (the first such run on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** The client a connection speaks for, as a trusted proxy's header named it. */
const proxiedClients = new WeakMap<Socket, { readonly address: string; readonly port: number }>();

/**
 * The address per-client rules key on: the client a trusted proxy named in its PROXY header, else the
 * socket's peer.
 */
export function clientAddressOf(socket: Socket): string | undefined {
  return proxiedClients.get(socket)?.address ?? socket.remoteAddress;
}

export interface ProxyHeaderGate {
  /** Connections from trusted peers whose header has not arrived yet: closed by a shutdown. */
  readonly pending: ReadonlySet<Socket>;
}

/**
 * Makes `server` read the PROXY header of every connection from a trusted peer before its HTTP parser
 * sees the connection: the server's 'connection' listeners (Node's HTTP parser among them) are taken
 * off and called once the header is read, with the bytes after it put back. Install it after every
 * 'connection' listener of the server is registered.
 *
 * @param timeoutMs a trusted peer's connection whose header is not complete by then is closed
 */
export function gateProxyHeaders(server: Server, trusted: TrustedProxies, timeoutMs: number): ProxyHeaderGate {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const handOver = (socket: Socket): void => {
    for (const l of listeners) l.call(server, socket);
  };
  const pending = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    if (!trusted.has(socket.remoteAddress)) {
      handOver(socket);
      return;
    }
    pending.add(socket);
    let received: Buffer = Buffer.alloc(0);
    const giveUp = (): void => {
      done();
      socket.destroy();
    };
    const timer = setTimeout(giveUp, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      pending.delete(socket);
      socket.off('data', onData);
      socket.off('error', giveUp);
      socket.off('end', giveUp);
    };
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const header = parseProxyHeader(received);
      if (header.kind === 'incomplete') return;
      if (header.kind === 'invalid') {
        giveUp();
        return;
      }
      done();
      if (header.kind === 'proxy') proxiedClients.set(socket, { address: header.address, port: header.port });
      handOver(socket);
      // Not unshift(): Node's HTTP server reads the socket's handle directly, past the stream's buffer,
      // so bytes put back there were never parsed; its 'data' listener does parse what it is given.
      const rest = header.kind === 'absent' ? received : received.subarray(header.length);
      if (rest.length > 0) socket.emit('data', rest);
    };
    socket.on('data', onData);
    socket.once('error', giveUp);
    socket.once('end', giveUp);
    socket.once('close', done);
  });
  return { pending };
}
