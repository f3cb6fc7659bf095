/**
 * @module The per-address REST connection limit (HPD_REST_MAX_CONNECTIONS_PER_ADDRESS) for clients
 * behind a trusted proxy: address-cap.ts counts connections by the peer the kernel sees, which for
 * every one of them is the proxy. Here they count by the client its PROXY v2 header names.
 *
 * Why at the request and not at the open: uWS reads the header with the first bytes, after it has
 * reported the open. uWS (the build Node 22 loads) tells a handler neither which connection it serves
 * nor the client's port, so the proxy names the connection in a header it sets itself
 * (`X-Hpd-Conn: %[src_port]` in deploy/haproxy.cfg, overwriting any client's): a client connection
 * keeps one connection to an instance at a time (PROXY protocol connections are private to it), so
 * client address + port stands for one connection here. A close tells the client's address (uWS
 * keeps the parsed header until then) but not the port: it retires the client's least recently used
 * connection, and a connection unused for longer than uWS lets one idle is retired anyway. The count
 * can be briefly off by a connection that got retired in another's place; it corrects itself at the
 * next request or close of that client.
 *
 * With REST workers each thread counts its own connections as if every other thread held as many
 * (the acceptor deals connections in turn), like address-cap.ts.
 */
import { addressKey } from './socket-census.ts';

/** uWS closes an HTTP connection idle for 10 s; a little more, so a live connection is never retired for idling. */
export const PROXIED_IDLE_MS = 12_000;

/** Requests between two sweeps of every client's idle connections. */
const SWEEP_EVERY = 4096;

export class ProxiedAddressCap {
  readonly #max: number;
  readonly #threads: number;
  readonly #now: () => number;
  /** Per client address, its connections by tag, least recently used first, with their last use. */
  readonly #clients = new Map<string, Map<string, number>>();
  #admitted = 0;
  /** Refused connections not closed yet, per client: their closes retire nothing (they were never counted). */
  readonly #refused = new Map<string, number>();

  constructor(max: number, threads = 1, now: () => number = () => performance.now()) {
    this.#max = max;
    this.#threads = threads;
    this.#now = now;
  }

  /**
   * A request from `client` (uWS's 4 or 16 address bytes) on the connection the proxy tags `tag`:
   * false when the client already holds its share of connections: answer, and close the connection.
   */
  admit(client: ArrayBuffer, tag: string): boolean {
    const key = addressKey(client);
    const now = this.#now();
    // Now and then every client's idle connections go: a client that stopped calling keeps none.
    if (++this.#admitted % SWEEP_EVERY === 0) this.#sweep(now);
    let conns = this.#clients.get(key);
    if (conns === undefined) {
      conns = new Map();
      this.#clients.set(key, conns);
    } else retireIdle(conns, now);
    if (conns.delete(tag)) {
      conns.set(tag, now);
      return true;
    }
    if ((conns.size + 1) * this.#threads > this.#max) {
      this.#refused.set(key, (this.#refused.get(key) ?? 0) + 1);
      return false;
    }
    conns.set(tag, now);
    return true;
  }

  /** A connection closed whose PROXY header named `client` (empty: none did). */
  closed(client: ArrayBuffer): void {
    if (client.byteLength === 0) return;
    const key = addressKey(client);
    // Whichever of the client's connections this was, one close per refused connection retires
    // nothing: the counted ones are retired once each all the same.
    const refused = this.#refused.get(key);
    if (refused !== undefined) {
      if (refused > 1) this.#refused.set(key, refused - 1);
      else this.#refused.delete(key);
      return;
    }
    const conns = this.#clients.get(key);
    if (conns === undefined) return;
    const oldest = conns.keys().next();
    if (!oldest.done) conns.delete(oldest.value);
    if (conns.size === 0) this.#clients.delete(key);
  }

  /** Connections counted for `client` now (tests, diagnostics). */
  held(client: ArrayBuffer): number {
    return this.#clients.get(addressKey(client))?.size ?? 0;
  }

  #sweep(now: number): void {
    for (const [key, conns] of this.#clients) {
      retireIdle(conns, now);
      if (conns.size === 0) this.#clients.delete(key);
    }
  }
}

/** Drops the connections of one client unused for PROXIED_IDLE_MS (they are first: least recently used first). */
function retireIdle(conns: Map<string, number>, now: number): void {
  for (const [tag, used] of conns) {
    if (now - used < PROXIED_IDLE_MS) break;
    conns.delete(tag);
  }
}
