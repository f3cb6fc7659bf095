/**
 * @module The REST front on uWebSockets.js: a thin adapter from HTTP to the operations.
 *
 * The request pipeline is src/http/rest-pipeline.ts, the byte-level writers src/http/rest-writers.ts,
 * the fixed documents src/http/rest-documents.ts and what the routes share src/http/rest-front.ts.
 *
 * Every handler is synchronous (all data is in RAM), so it copies what it needs from the request,
 * runs the fixed order of docs/compatibility.md#request-processing-order and writes status, headers and body in one corked pass.
 * Every route is registered through RestFront.on (rest-front.ts), which attaches the abort handler uWS requires before
 * anything is written, and bodies are ended with backpressure (src/http/response-writer.ts), so no
 * client behaviour can abort the process or make it buffer without bound. Everything a response needs
 * besides the operation's body (request id, ETag, Link, rate-limit, CORS) is added here, once, for all
 * routes.
 */
import { asLiveRegistry } from '../operations/live-registry.ts';
import { AddressCap, DEFAULT_REST_MAX_CONNECTIONS_PER_ADDRESS } from './address-cap.ts';
import { createConnectionCap } from './connection-cap.ts';
import { ProxiedAddressCap } from './proxied-address-cap.ts';
import { tooManyConnections } from './front-problems.ts';
import { requestIdFrom } from './request-id.ts';
import { TrustedProxies } from './trusted-proxies.ts';
import { ResponseCache } from './response-cache.ts';
import { registerDocuments } from './rest-documents.ts';
import { RestFront, type ServerConfig } from './rest-front.ts';
import { buildRoutes, OperationPipeline } from './rest-pipeline.ts';
import type { CachedResponse } from './rest-writers.ts';
import { pendingResponses } from './response-writer.ts';
import { listenExclusive, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.ts';

export type { ServerConfig } from './rest-front.ts';

export const DEFAULT_REST_MAX_CONNECTIONS = 10_000;

/** How often a closing server looks whether the responses still being written are done. */
const PENDING_POLL_MS = 10;

export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

/** Default budget of the search cache: off (HPD_SEARCH_CACHE_MB's description gives the measurement). */
export const DEFAULT_SEARCH_CACHE_BYTES = 0;

export interface RestServer {
  /** Listens on `port` (0 = any free port) at `host`; resolves with the port. */
  listen(port: number, host?: string): Promise<number>;
  /**
   * The app's descriptor, for an acceptor app in another thread to hand it connections
   * (src/http/rest-pool.ts); a server used this way does not listen itself.
   */
  appDescriptor(): unknown;
  /** Fails readiness (/readyz 503) and answers with `Connection: close`; still accepting and serving. */
  drain(): void;
  /**
   * Stops accepting and fails readiness; responses still being written get up to `graceMs` to finish
   * (answers meanwhile carry `Connection: close`), then every connection is closed. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
  /** What the response cache holds: canonical requests and the bytes counted for them. */
  responseCacheStats(): { readonly entries: number; readonly bytes: number };
  /** The same for the search cache. */
  searchCacheStats(): { readonly entries: number; readonly bytes: number };
}

/**
 * uWS closes a connection that sends nothing after ~10 s but accepts without limit: the cap keeps a
 * flood of connections from taking every file descriptor of the process (MCP and the authorization
 * server included). uWS reports each opened (+1) and closed (-1) connection to the filter.
 *
 * A trusted proxy's connections are not counted against its own address (it speaks for many
 * clients): their clients are counted at their requests (proxied-address-cap.ts), and a close
 * reports the client uWS read from the PROXY header.
 */
function capConnections(
  app: TemplatedApp,
  name: string,
  maxConnections: number,
  perAddress: AddressCap | null,
  proxied: ProxiedGate | null,
): void {
  const cap = createConnectionCap(name, maxConnections);
  let openConnections = 0;
  // biome-ignore lint/suspicious/useIterableCallbackReturn: uWS's connection filter, not Array.prototype.filter
  app.filter((res, change) => {
    openConnections += Number(change);
    if (Number(change) <= 0) {
      proxied?.cap?.closed(res.getProxiedRemoteAddress());
      return;
    }
    if (openConnections > maxConnections) {
      cap.refuse();
      res.close();
      return;
    }
    if (perAddress === null) return;
    const remote = res.getRemoteAddress();
    if (proxied?.trusted.hasRaw(remote) === true) return;
    if (!perAddress.admit(remote, openConnections)) res.close();
  });
}

/** Trusted proxies and the per-address limit of their clients (null: no limit). */
interface ProxiedGate {
  readonly trusted: TrustedProxies;
  readonly cap: ProxiedAddressCap | null;
}

/** The header deploy/haproxy.cfg sets to name the client connection a request came on (its port). */
const CONNECTION_TAG_HEADER = 'x-hpd-conn';

/**
 * The per-address limit of a trusted proxy's client, checked on each request (uWS has read the PROXY
 * header by then): true when the request was refused with a 429 and its connection closes.
 */
function refuseProxied(gate: ProxiedGate, front: RestFront, max: number): (res: HttpResponse, req: HttpRequest) => boolean {
  return (res, req) => {
    const cap = gate.cap;
    if (cap === null || !gate.trusted.hasRaw(res.getRemoteAddress())) return false;
    const client = res.getProxiedRemoteAddress();
    const tag = req.getHeader(CONNECTION_TAG_HEADER);
    // The proxy speaking for itself (LOCAL: its health checks), or a proxy that does not name its
    // connections: nothing to count by.
    if (client.byteLength === 0 || tag === '' || cap.admit(client, tag)) return false;
    const path = req.getUrl();
    const requestId = requestIdFrom(req.getHeader('x-request-id'));
    front.write(res, front.problemReply(tooManyConnections(max), path, [['retry-after', '1']]), false, requestId, true);
    return true;
  };
}

export function createRestServer(config: ServerConfig): RestServer {
  const live = asLiveRegistry(config.registry);
  const app: TemplatedApp = uws.App();
  const front = new RestFront(config, app, live.current());
  const cache = new ResponseCache<CachedResponse>(config.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES);
  // Search requests are many and skewed (a few ZIPs and ages take most of them): least recently used goes first.
  const searchCache = new ResponseCache<CachedResponse>(config.searchCacheBytes ?? DEFAULT_SEARCH_CACHE_BYTES, { lru: true });
  let listenSocket: us_listen_socket | null = null;
  let closing: Promise<void> | undefined;
  let listeningPort = 0;
  const name = config.name ?? 'rest';
  const perAddressMax = config.maxConnectionsPerAddress ?? DEFAULT_REST_MAX_CONNECTIONS_PER_ADDRESS;
  const perAddress =
    perAddressMax === 0
      ? null
      : new AddressCap({ max: perAddressMax, name, threads: config.threads, port: config.listeningPort ?? (() => listeningPort) });
  const trusted =
    config.trustedProxies === undefined || config.trustedProxies.length === 0 ? null : new TrustedProxies(config.trustedProxies);
  const proxied: ProxiedGate | null =
    trusted === null ? null : { trusted, cap: perAddressMax === 0 ? null : new ProxiedAddressCap(perAddressMax, config.threads) };
  capConnections(app, name, config.maxConnections ?? DEFAULT_REST_MAX_CONNECTIONS, perAddress, proxied);
  if (proxied?.cap != null) front.gate = refuseProxied(proxied, front, perAddressMax);
  const routes = buildRoutes();
  const pipeline = new OperationPipeline(front, config, { response: cache, search: searchCache });
  for (const route of routes) front.route(route.pattern, route.label, (res, req, head) => pipeline.handle(route, res, req, head));
  const documents = registerDocuments(front, config, routes);
  // A new build: new ETags, new bodies. Everything derived from the old snapshot goes with it.
  live.onSwap((next) => {
    front.ctx = { registry: next, baseUrl: config.baseUrl };
    documents.onSwap();
    cache.clear();
    searchCache.clear();
  });
  return {
    appDescriptor() {
      return (app as unknown as { getDescriptor(): unknown }).getDescriptor();
    },
    listen(port, host = '127.0.0.1') {
      return listenExclusive(app, 'rest', host, port).then((token) => {
        listenSocket = token;
        listeningPort = uws.us_socket_local_port(token);
        return listeningPort;
      });
    },
    responseCacheStats() {
      return { entries: cache.size, bytes: cache.bytes };
    },
    searchCacheStats() {
      return { entries: searchCache.size, bytes: searchCache.bytes };
    },
    drain() {
      front.draining = true;
    },
    close(graceMs = 0) {
      closing ??= (async () => {
        front.draining = true;
        if (listenSocket !== null) {
          uws.us_listen_socket_close(listenSocket);
          listenSocket = null;
        }
        // Handlers are synchronous: what can still be in flight is the rest of a body to a slow reader.
        // Idle keep-alive connections have nothing to lose; a request that was read is answered within
        // this turn, so one turn passes before anything is closed.
        const deadline = performance.now() + graceMs;
        do await new Promise<void>((resolve) => setTimeout(resolve, PENDING_POLL_MS));
        while (pendingResponses() > 0 && performance.now() < deadline);
        app.close();
      })();
      return closing;
    },
  };
}
