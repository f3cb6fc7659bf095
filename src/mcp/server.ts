/**
 * @module The MCP server: Streamable HTTP (protocol 2025-11-25 and the older revisions the SDK
 * negotiates) on a `node:http` listener beside the REST front.
 *
 * Every HTTP request is authenticated (API key or OAuth access token) before it reaches the SDK
 * transport; a 401 points clients at the RFC 9728 protected-resource metadata, which names the
 * authorization server. Tools map onto the REST operations (src/mcp/tools.ts) and use the same policy:
 * tier rules, the shared daily counter (one unit per tools/call), the same problem documents.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { toListenError } from '../http/listen-error.ts';
import { createNodeListener, type ListenerLimits, type NodeListener } from '../http/node-listener.ts';
import { requestIdFrom } from '../http/request-id.ts';
import { requestPath } from '../http/request-target.ts';
import type { TrustedProxies } from '../http/trusted-proxies.ts';
import type { DataRegistry } from '../operations/data-registry.ts';
import { asLiveRegistry, type LiveRegistry } from '../operations/live-registry.ts';
import {
  INTERNAL_ERROR,
  methodNotAllowed,
  missingCredential,
  noRoute,
  stateUnavailable,
  UNAUTHORIZED,
  type ProblemSpec,
} from '../operations/problems.ts';
import { bearerToken, classifyBearer } from '../policy/authenticate.ts';
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
import type { Quota } from '../policy/quota.ts';
import type { AccessLog } from '../observability/access-log.ts';
import type { HealthProbes } from '../observability/health-probes.ts';
import { createNodeRequestObserver } from '../http/node-request-observer.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';
import type { CredentialVerifier, Principal } from './credentials.ts';
import { accessTokenRejected, INVALID_TARGET, originNotAllowed } from './front-problems.ts';
import { readJson, sendJson, sendProblem, sendRpcError, type ProblemLinks } from './http-replies.ts';
import { protectedResource, type ProtectedResource } from './protected-resource.ts';
import { findInvalidParams, INVALID_PARAMS } from './request-params.ts';
import { SessionRegistry } from './sessions.ts';
import { createToolServer } from './tool-server.ts';

export interface McpServerConfig {
  /** A live registry follows newly published builds; a plain one is served as it is. */
  readonly registry: DataRegistry | LiveRegistry;
  readonly quota: Quota;
  readonly verifier: CredentialVerifier;
  /** The MCP resource identifier and endpoint, e.g. `http://127.0.0.1:8081/mcp`. */
  readonly mcpUrl: string;
  /** Issuer of the authorization server named in the protected-resource metadata. */
  readonly authServerUrl: string;
  /** REST origin: problem `type`s and links in tool results are REST URLs. */
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  /** Browser origins allowed to call the endpoint (requests without Origin are always allowed). */
  readonly allowedOrigins?: readonly string[];
  readonly idleMs?: number;
  readonly maxSessionsPerPrincipal?: number;
  readonly clock?: () => number;
  readonly version?: string;
  /** Timeouts and connection cap of the listener (defaults: DEFAULT_LISTENER_LIMITS). */
  readonly listenerLimits?: Partial<ListenerLimits>;
  /** Peers whose PROXY protocol v2 header names the client (HPD_TRUSTED_PROXIES). */
  readonly trustedProxies?: TrustedProxies;
  /** /healthz and /readyz (src/observability/health-probes.ts); absent: those paths are 404. */
  readonly health?: HealthProbes;
  /** The main thread's request counters (/metrics). */
  readonly metrics?: RequestMetrics;
  readonly accessLog?: AccessLog;
  /** Unexpected errors; default: one line on stderr. */
  readonly onError?: (err: unknown) => void;
}

export interface McpHttpServer {
  listen(port: number, host?: string): Promise<number>;
  /**
   * Stops accepting, ends the sessions (and their SSE streams), lets requests in flight finish for up
   * to `graceMs` (default 0: close at once), then closes every connection.
   */
  close(graceMs?: number): Promise<void>;
  /** Live MCP sessions (for tests and readiness). */
  readonly sessionCount: number;
}

interface Live {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
}

export function createMcpServer(config: McpServerConfig): McpHttpServer {
  const clock = config.clock ?? Date.now;
  const mcp = new URL(config.mcpUrl);
  const mcpPath = mcp.pathname.replace(/\/+$/, '') || '/';
  const prm = protectedResource(config.mcpUrl, mcpPath, config.authServerUrl);
  const links: ProblemLinks = { baseUrl: config.baseUrl, upgradeUrl: config.upgradeUrl };
  const allowedOrigins = new Set([mcp.origin, ...(config.allowedOrigins ?? [])]);
  const live = asLiveRegistry(config.registry);
  const sessions = new SessionRegistry<Live>({
    idleMs: config.idleMs ?? 30 * 60_000,
    maxPerOwner: config.maxSessionsPerPrincipal ?? 20,
    clock,
    dispose: async (live) => {
      await live.transport.close().catch(() => {});
      await live.server.close().catch(() => {});
    },
  });
  const endpoint: Endpoint = { config, links, prm, sessions, live };

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = requestPath(req.url ?? '/');
    if (path === undefined) return sendProblem(res, links, INVALID_TARGET, '/');
    if (config.health?.answer(req, res, path) === true) return;
    if (prm.paths.has(path)) return prm.answer(res, method, path, links);
    if (path !== mcpPath && path !== '/') return sendProblem(res, links, noRoute(path), path);
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin)) return sendProblem(res, links, originNotAllowed(origin), path);
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      return sendProblem(res, links, methodNotAllowed(method, 'GET, POST, DELETE'), path, { allow: 'GET, POST, DELETE' });
    }
    const who = await authenticate(endpoint, req, res, path);
    if (who !== null) await handleMcp(endpoint, req, res, method, who);
  };

  const observe = createNodeRequestObserver(
    'mcp',
    (p) => (p === mcpPath || p === '/' ? '/mcp' : prm.paths.has(p) ? '/.well-known/oauth-protected-resource' : p),
    config.metrics,
    config.accessLog,
  );
  const onError =
    config.onError ?? ((err: unknown) => process.stderr.write(`mcp request failed: ${err instanceof Error ? err.message : String(err)}\n`));
  let listener: NodeListener | null = null;
  return {
    get sessionCount() {
      return sessions.size;
    },
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const l = createNodeListener(
          'mcp',
          (req, res) => {
            observe?.(req, res);
            onRequest(req, res).catch((err: unknown) => {
              onError(err);
              if (res.headersSent) {
                res.end();
                return;
              }
              // The id the detail asks to quote: the access log writes it with the request.
              const id = req.headers['x-request-id'];
              res.setHeader('x-request-id', requestIdFrom(typeof id === 'string' ? id : undefined));
              sendProblem(res, links, INTERNAL_ERROR, requestPath(req.url ?? '/') ?? '/');
            });
          },
          config.listenerLimits,
          config.trustedProxies,
        );
        listener = l;
        l.server.once('error', (err) => reject(toListenError('mcp', host, port, err)));
        l.server.listen(port, host, () => resolve((l.server.address() as AddressInfo).port));
      });
    },
    async close(graceMs = 0) {
      config.health?.drain();
      // Stop accepting first, so no session starts while the others end.
      const closed = listener?.close(graceMs);
      await sessions.close();
      await closed;
    },
  };
}

/** What the handling of one request to the endpoint needs. */
interface Endpoint {
  readonly config: McpServerConfig;
  readonly links: ProblemLinks;
  readonly prm: ProtectedResource;
  readonly sessions: SessionRegistry<Live>;
  readonly live: LiveRegistry;
}

/** The caller, or null when the request was answered (401 with a challenge naming the metadata, or 503). */
async function authenticate(e: Endpoint, req: IncomingMessage, res: ServerResponse, path: string): Promise<Principal | null> {
  const cred = await e.config.verifier.verify(req.headers.authorization);
  if (cred.ok) return cred.principal;
  e.config.metrics?.authFailed('mcp', cred.reason);
  if (cred.reason === 'unavailable') {
    sendProblem(res, e.links, stateUnavailable(cred.description), path, { 'retry-after': '5' });
    return null;
  }
  const challenge =
    cred.reason === 'missing'
      ? `Bearer resource_metadata="${e.prm.url}", scope="${OAUTH_SCOPES.join(' ')}"`
      : `Bearer error="invalid_token", error_description="${cred.description.replaceAll('"', "'")}", resource_metadata="${e.prm.url}"`;
  sendProblem(res, e.links, refusal(cred, req), path, { 'www-authenticate': challenge });
  return null;
}

/**
 * The 401 of a refused credential: the REST front's for a missing or malformed credential or an API
 * key (the same key gets the same answer from both fronts), the verifier's reason for an access token.
 */
function refusal(cred: { readonly reason: string; readonly description: string }, req: IncomingMessage): ProblemSpec {
  if (cred.reason === 'missing') return missingCredential(queryOf(req.url ?? ''));
  return classifyBearer(bearerToken(req.headers.authorization) ?? '') === 'jwt' ? accessTokenRejected(cred.description) : UNAUTHORIZED;
}

/** The query of a request target, as name/value pairs (none without one). */
function queryOf(url: string): URLSearchParams {
  const q = url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
}

/** An authenticated MCP request: to its session's transport, or an initialize starting a session. */
async function handleMcp(e: Endpoint, req: IncomingMessage, res: ServerResponse, method: string, who: Principal): Promise<void> {
  const auth: AuthInfo = {
    token: who.token,
    clientId: who.clientId,
    scopes: [...who.scopes],
    expiresAt: who.expiresAt,
    resource: new URL(e.config.mcpUrl),
    extra: { principal: who },
  };
  let body: unknown;
  if (method === 'POST') {
    const parsed = await readJson(req);
    if (!parsed.ok) {
      if (parsed.status === 413) res.setHeader('connection', 'close');
      return sendRpcError(res, parsed.status, -32700, parsed.message);
    }
    body = parsed.value;
    const invalid = findInvalidParams(body);
    if (invalid !== null) {
      // One request: its JSON-RPC error, as the SDK would answer it. A batch: the HTTP request is refused.
      const error = JSON.stringify({ jsonrpc: '2.0', id: invalid.id, error: { code: INVALID_PARAMS, message: invalid.message } });
      return sendJson(res, Array.isArray(body) ? 400 : 200, error);
    }
  }
  const sid = req.headers['mcp-session-id'];
  const request = Object.assign(req, { auth });
  if (typeof sid === 'string' && sid !== '') {
    const live = e.sessions.touch(sid, who.userId);
    if (live === undefined) return sendRpcError(res, 404, -32001, 'Session not found: start a new session with initialize');
    await live.transport.handleRequest(request, res, body);
    return;
  }
  if (method !== 'POST' || !isInitializeRequest(body))
    return sendRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
  const { config } = e;
  const server = createToolServer({ live: e.live, quota: config.quota, links: e.links, version: config.version, metrics: config.metrics });
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => e.sessions.add(id, who.userId, { transport, server }),
    onsessionclosed: (id) => void e.sessions.drop(id),
  });
  await server.connect(transport);
  await transport.handleRequest(request, res, body);
}
